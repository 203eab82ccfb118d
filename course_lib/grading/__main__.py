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
    from .autograde import main as autograde_main
    autograde_main(argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
