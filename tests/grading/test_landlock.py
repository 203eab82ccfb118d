"""Landlock confines a part's files at the levels without namespaces (issue 21): native writers leave
nothing in /tmp, /var/tmp, /dev/shm or /run/lock, and nothing of the course, of /proc (another
process's environment, its working directory) can be read. The guard and seccomp are switched off
here: what is checked is what the kernel holds for code that got past them. Without Landlock those
levels are refused unless asked for by name."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from attack_kit import MARK, PART_UID, marks_outside, probe
from course_grader import landlock, sandbox

pytestmark = pytest.mark.skipif(landlock.abi() == 0, reason="this kernel has no Landlock")
NATIVE = {"seccomp": False, "guard": False}            # Landlock on, the Python-level layers off
BARE = dict(NATIVE, landlock=False)

PROBE = """
import os
def probe():
    r = {{}}
    for where in ('/tmp', '/var/tmp', '/dev/shm', '/run/lock'):
        try:
            torch.from_file(where + '/{mark}-native', shared=True, size=4)
            r['wrote ' + where] = True
        except Exception as e:
            r['wrote ' + where] = type(e).__name__
    for name, path in {paths!r}.items():
        try:
            with open(path, 'rb') as f:
                r[name] = f.read(40).decode('latin-1')
        except OSError as e:
            r[name] = type(e).__name__
    try:
        r['cwd of the grader'] = os.listdir('/proc/{grader}/cwd')
    except OSError as e:
        r['cwd of the grader'] = type(e).__name__
    try:
        r['python'] = len(open(os.__file__).read()) > 0
    except OSError as e:
        r['python'] = type(e).__name__
    return r
"""


@pytest.fixture(scope="module")
def course():
    """A course directory anyone may read, with a submission in it."""
    root = tempfile.mkdtemp(prefix="course-landlock-", dir="/var/tmp")
    os.chmod(root, 0o755)
    with open(os.path.join(root, "submission.ipynb"), "w") as f:
        f.write("ANOTHER STUDENT'S NOTEBOOK")
    os.chmod(os.path.join(root, "submission.ipynb"), 0o666)
    yield root
    shutil.rmtree(root)


@pytest.fixture(scope="module", params=["rlimits"])
def weak(request):
    z = sandbox.Zygote(request.param)
    assert z.ready()["landlock"] == landlock.abi()
    yield z
    z.close()


def _source(course):
    paths = {"course": os.path.join(course, "submission.ipynb"), "environ": f"/proc/{os.getppid()}/environ",
             "own environ": f"/proc/{os.getpid()}/environ", "passwd": "/etc/passwd"}
    return PROBE.format(mark=MARK, paths=paths, grader=os.getpid())


def _clean():
    for path in marks_outside():
        os.unlink(path)


def test_native_code_is_confined(weak, course):
    got = probe(weak, _source(course), layers=NATIVE)
    _clean()
    assert got["python"] is True or os.geteuid() == 0              # Python's own files stay readable (by the part
    #                                                                  uid too, unless Python lives in root's home)
    assert all(v is not True for k, v in got.items() if k.startswith("wrote")), got
    for name in ("course", "environ", "own environ", "passwd", "cwd of the grader"):
        assert got[name] == "PermissionError", (name, got[name])


def test_the_probe_sees_through_without_landlock(weak, course):
    """The same probe, Landlock off: the holes the test above checks are real at these levels."""
    got = probe(weak, _source(course), layers=BARE)
    _clean()
    assert got["wrote /tmp"] is True and got["course"] == "ANOTHER STUDENT'S NOTEBOOK"
    if os.geteuid() != 0:                              # the grader's uid: its shell's environment is readable
        assert got["environ"] not in ("PermissionError", "FileNotFoundError"), got["environ"]


def test_a_root_grader_at_the_weak_level_still_runs_parts_as_their_own_uid(weak):
    """``--sandbox rlimits`` run by root (``uid`` before 0.5): the part leaves root as it does at ``root``."""
    uid = probe(weak, "import os\ndef probe():\n    return os.getuid()\n")
    assert uid == (PART_UID if os.geteuid() == 0 else os.geteuid()), uid


def test_the_weak_levels_are_refused_unless_forced_landlock_or_not():
    """Landlock governs opens, not stat or readlink: at the rlimits level a part can still observe the
    course's files (issue 30 item 8), so those levels are never picked on their own, and a forced one
    says what it gives away."""
    for level in sandbox.WEAK:
        for abi in (0, 7):
            with pytest.raises(sandbox.WeakSandbox, match=f"--sandbox {level}"):
                sandbox.confirm_level(level, forced=False, abi=abi)
            warning = sandbox.confirm_level(level, forced=True, abi=abi)
            assert "FORCED" in warning and "stat()" in warning and "class list" in warning
        assert "read and write" in sandbox.confirm_level(level, forced=True, abi=0)
    assert sandbox.confirm_level("root", forced=False, abi=0) is None


def test_a_part_at_a_weak_level_does_observe_the_course():
    """What the refusal is for: at the rlimits level, with Landlock on, a part's stat() of a file outside its
    view still answers (so these levels stay opt-in); at the strongest level the path does not exist."""
    top = tempfile.mkdtemp(prefix="observed-course-")          # world-searchable, as a course directory is
    course = os.path.join(top, "submitted", "alice")
    os.makedirs(course)
    os.chmod(top, 0o755)
    os.chmod(os.path.dirname(course), 0o755)
    for level in (["root", "rlimits"] if os.geteuid() == 0 else ["rlimits"]):
        z = sandbox.Zygote(level)
        try:
            z.ready()
            got = probe(z, "import os\ndef probe():\n    try:\n        return os.stat("
                        f"{str(course)!r}).st_mtime > 0\n    except OSError as e:\n        return type(e).__name__\n")
        finally:
            z.close()
        assert got == (True if level in sandbox.WEAK else "FileNotFoundError"), (level, got)
    shutil.rmtree(top)
