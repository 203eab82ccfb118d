"""Install the course's PyTorch into the running Python: the CPU build unless a GPU or you say otherwise.

`make lab` and `make test` run it with the virtual environment's Python, before they install the
course. The version is the one pyproject.toml pins. Which build, and from where:

* Linux without an NVIDIA GPU: the CPU build, from PyTorch's CPU wheel index
  (https://download.pytorch.org/whl/cpu), as PyTorch's install page documents. Where that index
  cannot be reached, pip's own configuration decides (a local wheel directory, a mirror, ...); if
  that configuration would bring the CUDA build (several GB of NVIDIA libraries a machine without a
  GPU cannot use), the script stops and says how to choose.
* Linux with an NVIDIA GPU: PyPI's build, which is the CUDA one.
* macOS and Windows: PyPI's build, which is already the CPU one (with MPS on Apple silicon).

The variable TORCH_INDEX overrides the choice:

    TORCH_INDEX=cpu                     PyTorch's CPU wheel index
    TORCH_INDEX=cu130                   PyTorch's CUDA 13.0 wheel index (any cuXYZ it publishes)
    TORCH_INDEX=pip                     pip's own configuration, whatever it brings (PyPI: CUDA on Linux)
    TORCH_INDEX=https://host/simple     an index of your own (also file://...)
    TORCH_INDEX=/path/to/wheels         a folder holding the torch wheel (other packages from pip's index)

`python tools/install_torch.py --explain` prints the decision and installs nothing.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PYTORCH_WHEELS = "https://download.pytorch.org/whl"
CPU_INDEX = f"{PYTORCH_WHEELS}/cpu"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


@dataclass(frozen=True)
class Plan:
    """What to install and why: ``pip install <requirement> <pip_args>``."""

    pip_args: tuple[str, ...]
    why: str
    #: pip's own configuration decides: look at what it would bring before installing it
    check_for_cuda: bool = False


def torch_requirement(pyproject: Path = PYPROJECT) -> str:
    """The torch line of pyproject.toml's dependencies (``torch==2.13.0``): the one place it is pinned."""
    import tomllib

    for line in tomllib.loads(pyproject.read_text())["project"]["dependencies"]:
        if re.match(r"torch\s*[=<>!~]", line):
            return line.replace(" ", "")
    raise SystemExit(f"no torch requirement in {pyproject}")


def plan(system: str, has_nvidia_gpu: Callable[[], bool], index_reachable: Callable[[str], bool],
         override: str | None) -> Plan:
    """The decision, from the facts (probed lazily: a fact the decision does not need is not asked).

    ``system`` is ``platform.system()`` ("Linux", "Darwin", "Windows"); ``override`` is TORCH_INDEX.
    """
    choice = (override or "").strip()
    if choice and choice != "auto":
        if choice == "pip":
            return Plan((), "TORCH_INDEX=pip: the build pip's own configuration gives")
        if choice == "cpu" or re.fullmatch(r"cu\d+|rocm[\d.]+|xpu", choice):
            return Plan(("--index-url", f"{PYTORCH_WHEELS}/{choice}"),
                        f"TORCH_INDEX={choice}: the build from PyTorch's {choice} wheel index")
        if re.match(r"(https?|file)://", choice):
            return Plan(("--index-url", choice), f"TORCH_INDEX: the build from the index {choice}")
        if os.path.isdir(choice):
            return Plan(("--find-links", choice),
                        f"TORCH_INDEX: a torch wheel from the folder {choice} (other packages from pip's index)")
        raise SystemExit(f"TORCH_INDEX={choice!r}: expected cpu, cuXYZ, pip, auto, an index URL or a folder "
                         "of wheels")
    if system != "Linux":
        name = {"Darwin": "macOS", "Windows": "Windows"}.get(system, system)
        return Plan((), f"{name}: PyPI's build, the CPU one (with MPS on Apple silicon)")
    if has_nvidia_gpu():
        return Plan((), "Linux with an NVIDIA GPU: PyPI's build, the CUDA one")
    if index_reachable(CPU_INDEX):
        return Plan(("--index-url", CPU_INDEX), f"Linux without an NVIDIA GPU: the CPU build from {CPU_INDEX}")
    return Plan((), f"Linux without an NVIDIA GPU, and {CPU_INDEX} cannot be reached: "
                    "the build pip's own configuration gives", check_for_cuda=True)


def has_nvidia_gpu() -> bool:
    """An NVIDIA GPU with its driver: listed by nvidia-smi, or by the driver under /proc."""
    gpus = Path("/proc/driver/nvidia/gpus")
    if gpus.is_dir() and any(gpus.iterdir()):
        return True
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            return False
        return "GPU" in out
    return False


def index_reachable(url: str, timeout: float = 10.0) -> bool:
    """Whether the index answers (its torch page, through the proxy variables pip also honours)."""
    try:
        with urllib.request.urlopen(f"{url}/torch/", timeout=timeout) as response:
            return response.status == 200
    except (OSError, ValueError):
        return False


def resolves_to_cuda(requirement: str, pip_args: tuple[str, ...] = ()) -> tuple[str, bool]:
    """What pip's configuration would install for ``requirement``: (its version, whether it is a CUDA
    build), from pip's dry-run report (the wheel's metadata only, not the wheel)."""
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--no-deps",
                           "--ignore-installed", "--report", "-", requirement, *pip_args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"pip cannot find {requirement}:\n{proc.stderr.strip()}")
    (item,) = json.loads(proc.stdout)["install"]
    version = item["metadata"]["version"]
    return version, build_of(version, item["metadata"].get("requires_dist") or []) == "CUDA"


def build_of(version: str, requires: list[str]) -> str:
    """"CUDA", "ROCm" or "CPU": a wheel's local label (2.13.0+cpu), else its NVIDIA dependencies
    (PyPI's Linux wheel is the CUDA build without a label)."""
    if "+cu" in version or any(r.lower().startswith("nvidia-") for r in requires):
        return "CUDA"
    return "ROCm" if "+rocm" in version else "CPU"


def main(argv: list[str]) -> int:
    sys.stdout.reconfigure(line_buffering=True)           # in order with pip's output and our stderr
    requirement = torch_requirement()
    decided = plan(platform.system(), has_nvidia_gpu, index_reachable, os.environ.get("TORCH_INDEX"))
    print(f"torch: {decided.why}")
    if "--explain" in argv:
        print("pip install", requirement, *decided.pip_args)
        return 0
    if decided.check_for_cuda:
        version, cuda = resolves_to_cuda(requirement, decided.pip_args)
        if cuda:
            print(f"torch: pip's configuration here gives torch {version}, a CUDA build (about 5 GB with its\n"
                  "NVIDIA libraries), and this machine has no NVIDIA GPU. Choose, then run make again:\n"
                  "  TORCH_INDEX=pip make lab                 that CUDA build all the same\n"
                  "  TORCH_INDEX=/path/to/wheels make lab     a folder with a CPU wheel (torch-*+cpu-*.whl)\n"
                  f"  TORCH_INDEX=https://.../simple make lab  an index of your own (a mirror of {CPU_INDEX})",
                  file=sys.stderr)
            return 2
        print(f"torch: that is torch {version}, not a CUDA build")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", requirement, *decided.pip_args], check=True)
    from importlib.metadata import requires, version

    installed = version("torch")
    print(f"torch: installed torch {installed}, the {build_of(installed, requires('torch') or [])} build")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
