"""The set-up path agrees with itself: pyproject.toml, environment.yml and the Makefile."""

import re
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import tomllib  # noqa: E402  (the standard library from Python 3.11, the course's minimum)

ROOT = Path(__file__).resolve().parents[1]


def pyproject_requirements() -> dict[str, str]:
    """Every requirement of pyproject.toml (dependencies and all extras): name -> version spec."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
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
            if value not in ("-e .", "--editable ."):
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


def test_environment_yml_lists_the_same_dependencies_as_pyproject():
    pyproject, conda = pyproject_requirements(), environment_pip_requirements()
    assert pyproject, "no dependencies read from pyproject.toml"
    assert sorted(set(pyproject) - set(conda)) == [], "in pyproject.toml, missing from environment.yml"
    assert sorted(set(conda) - set(pyproject)) == [], "in environment.yml, missing from pyproject.toml"
    for name in pyproject:
        assert pyproject[name] == conda[name], f"{name}: pyproject {pyproject[name]!r} vs environment.yml {conda[name]!r}"


def test_environment_yml_installs_course_lib_itself():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s*-\s*-e \.\s*$", text, re.M), "environment.yml should end its pip list with `-e .`"


def test_torch_is_pinned_to_2_13_0_everywhere():
    assert pyproject_requirements()["torch"] == "==2.13.0"
    assert environment_pip_requirements()["torch"] == "==2.13.0"
    makefile = (ROOT / "Makefile").read_text()
    assert "torch==2.13.0" in makefile
    # every mention of a torch requirement in the Makefile is the pin
    for match in re.finditer(r"\btorch\s*([=<>!~]=?[^\s\"']*)?(?=[\s\"']|$)", makefile):
        if match.group(1):
            assert match.group(1) == "==2.13.0", f"Makefile mentions {match.group(0)!r}"
