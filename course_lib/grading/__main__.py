"""``python -m course_lib.grading autograde ASSIGNMENT [nbgrader autograde options] [--jobs N]``."""

import sys

USAGE = """usage: python -m course_lib.grading autograde ASSIGNMENT [--student ID] [--jobs N]
                                       [--part-timeout SECONDS] [--force] [other nbgrader autograde options]

Autograde the encoder exercise like `nbgrader autograde`, but with every part of every submission run
in a sandboxed process (see course_lib/grading/autograde.py). Run it from the course root."""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] != "autograde":
        print(f"unknown command {argv[0]!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    _skip_unused_imports()
    _prespawn(argv[1:])
    from .autograde import main as autograde_main
    autograde_main(argv[1:])
    return 0


def _skip_unused_imports() -> None:
    """jsonschema imports ``rfc3987_syntax`` when it is installed, only for its optional "iri" format
    checker, and that import compiles some forty grammars (~1.5 s, the largest part of the grader's
    start-up). Neither nbformat nor nbgrader validates with a format checker, so the grader's process
    goes without it (jsonschema treats it as not installed)."""
    sys.modules.setdefault("rfc3987_syntax", None)


def _option(argv: list, name: str, default: str) -> str:
    for i, arg in enumerate(argv):
        if arg == f"--{name}" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(f"--{name}="):
            return arg.split("=", 1)[1]
    return default


def _prespawn(argv: list) -> None:
    """Start the sandbox's zygotes now, so that their torch import overlaps nbgrader's start-up (the
    app adopts them if its settings agree, else it starts its own)."""
    from . import confine, pool, sandbox
    confine.prctl(confine.PR_SET_DUMPABLE, 0)      # same-uid processes cannot read our memory or environment
    try:
        level = sandbox.detect_level(_option(argv, "sandbox", "auto"))
        jobs = max(1, int(_option(argv, "jobs", "2")))
    except ValueError:
        return
    pool.PRESPAWNED[:] = [level, [sandbox.Zygote(level) for _ in range(jobs)]]


if __name__ == "__main__":
    sys.exit(main())
