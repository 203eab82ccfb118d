"""The code passes ruff as pyproject.toml's [tool.ruff] configures it (`python -m ruff check .`)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"ruff check . (exit {proc.returncode}):\n{proc.stdout[-6000:]}{proc.stderr[-2000:]}"
