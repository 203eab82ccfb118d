"""Where the sandbox builds its new root: never over a directory that holds what it must show."""

from course_grader import confine


def test_the_root_is_built_where_nothing_to_bind_lives():
    assert confine._new_root(["/usr/lib/python3", "/root/.venv"]) == "/tmp"
    # a Python environment under /tmp: a tmpfs over /tmp would hide it before it is bound
    assert confine._new_root(["/tmp/class/env", "/usr"]) not in ("/tmp", "/usr")
    assert confine._new_root(["/tmp"]) != "/tmp"
