"""tools/install_torch.py: which PyTorch build `make lab` installs, from the facts it probes."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("install_torch", ROOT / "tools" / "install_torch.py")
install_torch = importlib.util.module_from_spec(_spec)
sys.modules["install_torch"] = install_torch
_spec.loader.exec_module(install_torch)
plan, CPU_INDEX = install_torch.plan, install_torch.CPU_INDEX


def facts(gpu=False, reachable=True):
    """The two probes, recording whether they were asked (a fact the decision does not need is not probed)."""
    asked = []

    def has_gpu():
        asked.append("gpu")
        return gpu

    def index_reachable(url):
        asked.append(url)
        return reachable
    return has_gpu, index_reachable, asked


def test_linux_without_a_gpu_gets_the_cpu_build_from_pytorchs_index():
    gpu, reachable, asked = facts(gpu=False, reachable=True)
    decided = plan("Linux", gpu, reachable, None)
    assert decided.pip_args == ("--index-url", CPU_INDEX) and not decided.check_for_cuda
    assert CPU_INDEX == "https://download.pytorch.org/whl/cpu" and asked == ["gpu", CPU_INDEX]
    assert "without an NVIDIA GPU" in decided.why and "CPU build" in decided.why


def test_unreachable_index_falls_back_to_pips_configuration_and_checks_it():
    gpu, reachable, _ = facts(gpu=False, reachable=False)
    decided = plan("Linux", gpu, reachable, None)
    assert decided.pip_args == () and decided.check_for_cuda
    assert "cannot be reached" in decided.why and "pip's own configuration" in decided.why


def test_linux_with_a_gpu_gets_pypis_cuda_build_without_probing_the_index():
    gpu, reachable, asked = facts(gpu=True)
    decided = plan("Linux", gpu, reachable, "")
    assert decided.pip_args == () and not decided.check_for_cuda and "CUDA" in decided.why
    assert asked == ["gpu"]


@pytest.mark.parametrize("system, name", [("Darwin", "macOS"), ("Windows", "Windows")])
def test_macos_and_windows_get_pypis_build_without_probing(system, name):
    gpu, reachable, asked = facts(gpu=True, reachable=True)
    decided = plan(system, gpu, reachable, None)
    assert decided.pip_args == () and not decided.check_for_cuda and decided.why.startswith(name)
    assert asked == []


@pytest.mark.parametrize("override, args", [
    ("cpu", ("--index-url", CPU_INDEX)),
    ("cu130", ("--index-url", "https://download.pytorch.org/whl/cu130")),
    ("pip", ()),
    ("https://mirror.example/simple", ("--index-url", "https://mirror.example/simple")),
    ("file:///srv/wheels/simple", ("--index-url", "file:///srv/wheels/simple")),
])
@pytest.mark.parametrize("system", ["Linux", "Darwin", "Windows"])
def test_the_variable_overrides_every_probe(override, args, system):
    gpu, reachable, asked = facts(gpu=False, reachable=False)
    decided = plan(system, gpu, reachable, override)
    assert decided.pip_args == args and not decided.check_for_cuda and "TORCH_INDEX" in decided.why
    assert asked == []


def test_a_folder_of_wheels_is_found_links(tmp_path):
    gpu, reachable, asked = facts()
    decided = plan("Linux", gpu, reachable, str(tmp_path))
    assert decided.pip_args == ("--find-links", str(tmp_path)) and asked == []


def test_auto_is_the_default_and_nonsense_is_refused():
    gpu, reachable, _ = facts(gpu=False, reachable=True)
    assert plan("Linux", gpu, reachable, "auto") == plan("Linux", gpu, reachable, None)
    with pytest.raises(SystemExit, match="TORCH_INDEX='/no/such/folder': expected cpu, cuXYZ, pip"):
        plan("Linux", gpu, reachable, "/no/such/folder")


@pytest.mark.parametrize("version, requires, build", [
    ("2.13.0+cpu", ["filelock", "sympy>=1.13.3"], "CPU"),
    ("2.13.0", ["filelock", 'nvidia-cuda-runtime==13.0.96; platform_system == "Linux"'], "CUDA"),
    ("2.13.0+cu130", [], "CUDA"),
    ("2.13.0", ["filelock"], "CPU"),                     # macOS and Windows: PyPI's wheel
])
def test_a_wheels_build_from_its_label_or_its_nvidia_dependencies(version, requires, build):
    assert install_torch.build_of(version, requires) == build


def test_the_pin_is_read_from_pyproject():
    assert install_torch.torch_requirement() == "torch==2.13.0"
