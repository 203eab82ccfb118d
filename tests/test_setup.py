"""The set-up path agrees with itself: pyproject.toml, environment.yml and the Makefile."""

import ast
import re
import tomllib  # the standard library from Python 3.11, the course's minimum
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pyproject_requirements(extras=None) -> dict[str, str]:
    """The requirements of pyproject.toml (its dependencies and the given extras, all when None):
    name -> version spec."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for name, extra in project.get("optional-dependencies", {}).items():
        if extras is None or name in extras:
            lines += extra
    return as_specs(lines)


def environment_pip_requirements() -> dict[str, str]:
    """The ``pip:`` list of environment.yml, without the ``-e .`` line (read without a YAML library)."""
    lines, in_pip, pip_indent = [], False, None
    for raw in (ROOT / "environment.yml").read_text().splitlines():
        text = raw.split("#", 1)[0].rstrip()
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        item = text.strip()
        if item == "- pip:":
            in_pip, pip_indent = True, indent
            continue
        if in_pip:
            if indent <= pip_indent or not item.startswith("- "):
                in_pip = False
                continue
            value = item[2:].strip().strip("'\"")
            if value not in ("-e .", "--editable .") and not value.startswith("--"):
                lines.append(value)
    return as_specs(lines)


def as_specs(lines) -> dict[str, str]:
    specs = {}
    for line in lines:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        spec = str(requirement.specifier)
        assert specs.get(name, spec) == spec, f"{name} pinned two ways: {specs[name]!r} and {spec!r}"
        specs[name] = spec
    return specs


def test_environment_yml_lists_a_students_dependencies_as_pyproject():
    """environment.yml is a student's environment: the dependencies and the `lab` extra."""
    pyproject, conda = pyproject_requirements(extras=("lab",)), environment_pip_requirements()
    assert pyproject, "no dependencies read from pyproject.toml"
    assert sorted(set(pyproject) - set(conda)) == [], "in pyproject.toml, missing from environment.yml"
    assert sorted(set(conda) - set(pyproject)) == [], "in environment.yml, missing from pyproject.toml"
    for name in pyproject:
        assert pyproject[name] == conda[name], (f"{name}: pyproject {pyproject[name]!r} "
                                                f"vs environment.yml {conda[name]!r}")


def test_environment_yml_installs_course_lib_itself():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s*-\s*-e \.\s*$", text, re.M), "environment.yml should end its pip list with `-e .`"


def test_torch_is_pinned_to_2_13_0_everywhere():
    assert pyproject_requirements()["torch"] == "==2.13.0"
    assert environment_pip_requirements()["torch"] == "==2.13.0"
    # the Makefile pins nothing: tools/install_torch.py reads the pin from pyproject.toml
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"torch\s*[=<>!~]=", makefile) is None
    assert "$(PY) tools/install_torch.py" in makefile


def test_environment_yml_searches_the_cpu_index():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s*-\s*--extra-index-url https://download\.pytorch\.org/whl/cpu\s*$", text, re.M)


def recipe(target: str) -> tuple[list[str], list[str]]:
    """A Makefile rule's prerequisites and recipe lines (the first rule whose target is ``target``)."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"^{re.escape(target)}\s*:(?!=)", line):
            body = []
            for following in lines[i + 1:]:
                if not following.startswith("\t"):
                    break
                body.append(following.strip())
            return line.split(":", 1)[1].split(), body
    raise AssertionError(f"no rule for {target} in the Makefile")


def test_make_lab_sets_up_a_students_environment_only():
    """`make lab` installs torch, then `.[lab]`: none of the developer extras (tests, browser, hub)."""
    prerequisites, _ = recipe("lab")
    assert prerequisites == ["$(STAMP)"]
    deps, body = recipe("$(STAMP)")
    assert "tools/install_torch.py" in deps and "pyproject.toml" in deps
    installs = [line for line in body if "pip install" in line and "--upgrade pip" not in line]
    assert installs == ['$(PY) -m pip install -q -e ".[lab]"'], installs
    assert body.index("$(PY) tools/install_torch.py") < body.index(installs[0])
    assert any("python3-venv" in line for line in body)


def test_make_test_sets_up_the_developers_extras():
    prerequisites, _ = recipe("test")
    assert "$(DEV_STAMP)" in prerequisites and "browser-deps" in prerequisites and "hub-deps" in prerequisites
    assert "sandbox-deps" in prerequisites          # the grader refuses to grade without bubblewrap
    _, body = recipe("sandbox-deps")
    assert any("command -v bwrap" in line for line in body)
    assert any("install -y -qq bubblewrap" in line for line in body)
    assert "trace-deps" in prerequisites            # the end-to-end tests trace the grader's opens
    _, body = recipe("trace-deps")
    assert any("command -v strace" in line for line in body)
    assert any("install -y -qq strace" in line for line in body)
    deps, body = recipe("$(DEV_STAMP)")
    assert deps == ["$(STAMP)", "grader/pyproject.toml"] and '$(PY) -m pip install -q -e ".[dev]" -e grader' in body
    dev = pyproject_requirements(extras=("dev",))
    for needed in ("pytest", "nbval", "playwright", "jupyterhub", "transformers"):
        assert needed in dev, f"the dev extra lacks {needed}"


def test_one_version_everywhere():
    """pyproject.toml, course_lib.__version__, CITATION.cff and the newest CHANGELOG.md entry agree,
    so a class can pin the version it was taught with."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    init = re.search(r'^__version__ = "([^"]+)"', (ROOT / "course_lib" / "__init__.py").read_text(), re.M)
    citation = re.search(r"^version: *\"?([^\"\s]+)", (ROOT / "CITATION.cff").read_text(), re.M)
    changelog = re.search(r"^## (\S+) \(", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert init and init.group(1) == version
    assert citation and citation.group(1) == version
    assert changelog and changelog.group(1) == version


def test_licences_cover_code_and_material():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    cc = (ROOT / "LICENSE-CC-BY-4.0.md").read_text()
    assert "https://creativecommons.org/licenses/by/4.0/legalcode" in cc
    for covered in ("res/", "docs/", "notebooks/07_exercise/figures/", "markdown cells"):
        assert covered in cc
    citation = (ROOT / "CITATION.cff").read_text()
    assert "cff-version: 1.2.0" in citation and "- MIT" in citation and "- CC-BY-4.0" in citation


def test_every_slow_module_named_exists():
    """`make test-fast` leaves out the modules tests/conftest.py names: a name left behind by a module
    renamed or deleted marks nothing, and the module's successor would run in the fast tests."""
    # read, not imported: the module named "conftest" is tests/site's once that folder's tests are collected
    tree = ast.parse((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    SLOW_MODULES = next(ast.literal_eval(node.value) for node in tree.body
                        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SLOW_MODULES")
    for folder, names in SLOW_MODULES.items():
        assert (ROOT / "tests" / folder).is_dir(), folder
        missing = sorted(n for n in names or () if not (ROOT / "tests" / folder / f"{n}.py").is_file())
        assert not missing, f"tests/conftest.py names modules that do not exist: {missing}"
