"""``python -m course_grader``'s process: the import it blocks at start (``_skip_unused_imports``) and its
end (the interpreter's own, frozen first). benchmarks/grader_start_and_exit.py measures what each buys.

The block relies on what jsonschema and nbformat do, not on an API: these tests fail when jsonschema no
longer imports ``rfc3987_syntax`` (the block is dead and can go) or when blocking it loses more than
the "iri" formats, or a schema the grader validates with uses them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "grader"), os.environ.get("PYTHONPATH", "")]))

JSONSCHEMA = """
import json, sys
if {blocked}:
    from course_grader.__main__ import _skip_unused_imports
    _skip_unused_imports()
import jsonschema, nbformat
nb = nbformat.v4.new_notebook()
nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
nbformat.validate(nb)
print(json.dumps([sys.modules.get("rfc3987_syntax") is not None, sorted(jsonschema.FormatChecker.checkers)]))
"""


def _fresh(code: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=120, **kwargs)


def test_jsonschema_imports_rfc3987_syntax_and_the_block_costs_only_the_iri_formats():
    runs = {}
    for blocked in (False, True):
        proc = _fresh(JSONSCHEMA.format(blocked=blocked))
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[blocked] = json.loads(proc.stdout)
    (imported, formats), (imported_blocked, formats_blocked) = runs[False], runs[True]
    assert imported, "jsonschema no longer imports rfc3987_syntax: __main__._skip_unused_imports buys nothing"
    assert not imported_blocked
    assert set(formats) - set(formats_blocked) == {"iri", "iri-reference"} and set(formats_blocked) <= set(formats)


def _formats(schema) -> set:
    """The values of the ``format`` keyword anywhere in a JSON schema (not a property named "format")."""
    if isinstance(schema, list):
        return set().union(*map(_formats, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    own = {schema["format"]} if isinstance(schema.get("format"), str) else set()
    return own.union(*(_formats(v) for v in schema.values()))


def test_no_notebook_schema_uses_the_iri_formats():
    import nbformat

    schemas = sorted(Path(nbformat.__file__).parent.glob("v*/*.schema.json"))
    assert schemas
    used = set().union(*(_formats(json.loads(p.read_text(encoding="utf-8"))) for p in schemas))
    assert not used & {"iri", "iri-reference"}, used


def test_the_grader_ends_as_python_does():
    """No os._exit: atexit handlers run and the exit status is main's (0 for --help, 2 for an unknown
    command, its message on stderr)."""
    code = ("import atexit, runpy, sys\natexit.register(lambda: print('atexit ran'))\n"
            "sys.argv = ['course_grader', {arg!r}]\nrunpy.run_module('course_grader', run_name='__main__')\n")
    helped = _fresh(code.format(arg="--help"))
    assert helped.returncode == 0, helped.stderr[-2000:]
    assert helped.stdout.startswith("usage: python -m course_grader") and helped.stdout.endswith("atexit ran\n")
    unknown = _fresh(code.format(arg="grade-everything"))
    assert unknown.returncode == 2 and "unknown command 'grade-everything'" in unknown.stderr
    assert unknown.stdout == "atexit ran\n"
