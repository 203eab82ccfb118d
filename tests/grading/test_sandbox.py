"""The sandbox's layers, each on its own: namespaces and the allow-list view, limits, the zygote's
clean start, the wire format, the static policy, and reading submissions without following links.

``layers=OFF`` switches the seccomp filter and the guard off: what is checked then is what the
kernel holds (namespaces, mounts, uid, rlimits) even for code that gets past the Python-level guard.
"""

from __future__ import annotations

import io
import os
import pathlib
import re
import shutil
import tempfile
import time

import numpy as np
import pytest

from attack_kit import (
    CASES,
    GOOD,
    LEVEL,
    OFF,
    PART_UID,
    assert_contained,
    descendants,
    options,
    probe,
    processes_of,
    run_part,
    zygote,  # noqa: F401 (a fixture: the tests take it by name)
)
from course_grader import runner, sandbox, wire
from course_lib.grading import policy
from course_lib.grading.parts import part_of_test

PROBE_READ = """
import os
def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read(200).decode('latin-1')
    except OSError as e:
        return type(e).__name__
"""

PROBE_FILES = PROBE_READ + """
def probe():
    r = {{'uid': os.getuid(), 'pid': os.getpid(), 'ppid': os.getppid(), 'sid': os.getsid(0),
         'env': dict(os.environ), 'proc': sorted(p for p in os.listdir('/proc') if p.isdigit()),
         'root': sorted(os.listdir('/'))}}
    r['tty_nr'] = read('/proc/self/stat').split(') ')[1].split()[4]
    for name, path in {paths!r}.items():
        r[name] = read(path)
    for target in ('/run/lock/course-attack', '/dev/shm/course-attack', '/var/tmp/course-attack', '/course-attack'):
        try:
            with open(target, 'w') as f:
                f.write('x')
            r['wrote ' + target] = True
        except OSError as e:
            r['wrote ' + target] = type(e).__name__
    try:
        import course_lib
        r['course_lib'] = course_lib.__file__
    except ImportError as e:
        r['course_lib'] = type(e).__name__
    return r
"""

PROBE_LANDLOCKED = PROBE_READ + """
def probe():
    r = {{name: read(path) for name, path in {paths!r}.items()}}
    try:
        r['proc'] = sorted(os.listdir('/proc'))
    except OSError as e:
        r['proc'] = type(e).__name__
    try:
        import course_lib
        r['course_lib'] = course_lib.__file__
    except ImportError as e:
        r['course_lib'] = type(e).__name__
    return r
"""

VIEW = LEVEL in ("root", "userns")          # namespaces here; elsewhere the same tests check the guard
OUTSIDE_READ = ("import builtins\nbuiltins.open({path!r}).read()\n")


def _view_top(argv: list) -> set:
    """The top-level names of the view bubblewrap was started with (its mounts' and links' destinations)."""
    two = {"--bind", "--ro-bind", "--dev-bind", "--symlink", "--bind-try", "--ro-bind-try", "--setenv"}
    one = {"--dev", "--proc", "--tmpfs", "--dir", "--mqueue"}
    top, i = set(), 0
    while i < len(argv) and argv[i].startswith("--"):
        if argv[i] in two:
            if argv[i] != "--setenv":
                top.add(argv[i + 2].split("/")[1])
            i += 3
        elif argv[i] in one:
            top.add(argv[i + 1].split("/")[1])
            i += 2
        else:
            i += 1 + (argv[i] in {"--chdir", "--size", "--perms", "--cap-add", "--cap-drop", "--uid", "--gid"})
    return top


def test_a_part_sees_only_the_allow_list(zygote, tmp_path):  # noqa: F811
    secret = tmp_path / "gradebook.db"
    secret.write_text("GRADES")
    os.chmod(secret, 0o644)
    if not VIEW:                                # no view of its own: the guard ends a part that reads it
        result, _ = run_part(zygote, "attention", OUTSIDE_READ.format(path=str(secret)) + GOOD["attention"])
        assert result.status == "failed" and "opens" in result.message
        return
    paths = {"gradebook": str(secret), "hostname": "/etc/hostname", "passwd": "/etc/passwd",
             "grader_environ": f"/proc/{os.getpid()}/environ", "runner": runner.__file__,
             "reference": sandbox.COURSE_LIB + "/grading/reference.py"}
    r = probe(zygote, PROBE_FILES.format(paths=dict(paths, harness=sandbox.GRADER_DIR + "/harness.py")),
              layers=OFF)                                               # what the view alone holds back
    for name in [*paths, *(("harness",) if LEVEL == "root" else ())]:   # the grader's files: root's folder
        assert r[name] in ("FileNotFoundError", "PermissionError"), (name, r[name])
    with open(f"/proc/{zygote.proc.pid}/cmdline", "rb") as f:          # bubblewrap's own argument list
        argv = [a.decode() for a in f.read().split(b"\0")[1:]]
    assert set(r["root"]) == _view_top(argv), r["root"]
    assert {"dev", "proc", "tmp"} <= set(r["root"]) and not {"etc", "home", "var", "run", "srv"} & set(r["root"])
    assert all(v != True for k, v in r.items() if k.startswith("wrote")), r   # noqa: E712
    assert r["sid"] == r["pid"] and r["tty_nr"] == "0"                  # its own session, no terminal
    assert str(os.getpid()) not in r["proc"] or r["pid"] == os.getpid()  # bubblewrap's PID namespace
    set_by_torch = {k for k in r["env"] if k.startswith("TORCH")}                # e.g. its inductor cache dir
    assert set(r["env"]) - set_by_torch <= set(sandbox.ENV) | {"COURSE_GRADING_DEBUG", "LD_LIBRARY_PATH"}
    if LEVEL == "root":
        assert r["uid"] == PART_UID != 0                  # not root
    landlocked = probe(zygote, PROBE_LANDLOCKED.format(paths=dict(paths, init_status="/proc/1/status",
                                                                  self_proc="/proc/self/status")),
                       layers={"seccomp": False, "guard": False})       # no PID namespace of its own: Landlock
    for name in paths:                                                 # (nor the grader's files, nor /proc)
        assert landlocked[name] in ("FileNotFoundError", "PermissionError"), (name, landlocked[name])
    assert landlocked["course_lib"] in ("ModuleNotFoundError", "ImportError")
    assert landlocked["proc"] == "PermissionError"
    assert secret.read_text() == "GRADES"
    assert_contained(zygote)


def test_the_judges_packages_are_root_s_alone():
    """A mother's view holds course_lib and course_grader for its judge, in a folder (0700) that a part's
    uid cannot open even where the kernel has no Landlock (layers OFF); elsewhere they are not there."""
    mother = sandbox.Mother(LEVEL, 1)
    try:
        z = mother.zygotes[0]
        z.ready()
        paths = {"judged": sandbox.JUDGE_DIR + "/course_lib/grading/reference.py",
                 "host": sandbox.COURSE_LIB + "/grading/reference.py", "grader": sandbox.GRADER_DIR + "/zygote.py"}
        r = probe(z, PROBE_FILES.format(paths=paths), layers=OFF if LEVEL == "root" else {})
        for name in (paths if VIEW else ()):
            assert r[name] in ("FileNotFoundError", "PermissionError"), (name, r[name])
        assert r["course_lib"] in ("ModuleNotFoundError", "ImportError")
    finally:
        mother.close()


def test_no_judge_at_userns_without_landlock(monkeypatch):
    """At userns every process of the sandbox has one uid: without Landlock nothing would keep a part
    from the judge's packages, so no Mother starts there (a kernel without Landlock, pretended)."""
    monkeypatch.setattr(sandbox.landlock, "abi", lambda: 0)
    with pytest.raises(sandbox.SandboxError, match="Landlock"):
        sandbox.Mother("userns", 1)


def test_course_lib_installed_in_site_packages_is_covered():
    """course_lib installed in a site-packages folder (not this checkout): the view covers it (an empty
    folder over it), so a part neither reads nor imports it, Landlock or not."""
    top = pathlib.Path(tempfile.mkdtemp(dir="/var/tmp"))              # not under /tmp: the view has its own
    try:
        _covered(top / "site-packages")
    finally:
        shutil.rmtree(top)


def _covered(site: pathlib.Path) -> None:
    for name in ("course_lib", "course_lib-1.0.dist-info", "numbers_kept"):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text(f"SECRET = {name!r}\n")
    (site / "course_lib.pth").write_text(str(site) + "\n")
    for folder, _, files in os.walk(site.parent):                    # a part's uid may read an install
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    paths = sandbox.python_paths()
    paths = dict(paths, readonly=paths["readonly"] + [str(site)], sys_path=paths["sys_path"] + [str(site)],
                 hidden=[str(site / n) for n in ("course_lib", "course_lib-1.0.dist-info", "course_lib.pth")])
    z = sandbox.Zygote(LEVEL, paths=paths)
    try:
        z.ready()
        files = {"init": str(site / "course_lib" / "__init__.py"), "pth": str(site / "course_lib.pth"),
                 "meta": str(site / "course_lib-1.0.dist-info" / "__init__.py"),
                 "kept": str(site / "numbers_kept" / "__init__.py")}
        r = probe(z, PROBE_FILES.format(paths=files), layers=OFF)
        assert r["course_lib"] in ("ModuleNotFoundError", "ImportError"), r["course_lib"]
        if LEVEL == "root":       # the folders bubblewrap makes above a bind are root's (0700): seen as root
            inside = f"/proc/{descendants(z.proc.pid)[0]}/root"
            r = {name: _read(inside + path) for name, path in files.items()}
        if VIEW:
            assert r["kept"] == "SECRET = 'numbers_kept'\n", r           # the rest of site-packages is there
            assert r["init"] == r["meta"] == "FileNotFoundError" and r["pth"] in ("", "PermissionError"), r
    finally:
        z.close()


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:                      # a file covered by /dev/null (nodev): PermissionError
        return type(e).__name__


def test_the_zygote_never_held_the_graders_state(monkeypatch):
    """A fresh interpreter: the grader's environment (a hub token) is in neither its environment nor
    its memory, though the grader itself holds it."""
    token = "hub-token-" + os.urandom(8).hex()
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", token)
    roster = ["student-" + os.urandom(6).hex() for _ in range(3)]             # the grader's class list
    z = sandbox.Zygote(LEVEL)
    try:
        z.ready()
        zygotes = descendants(z.proc.pid) + [z.proc.pid]
        for pid in zygotes:
            with open(f"/proc/{pid}/environ", "rb") as f:
                assert token.encode() not in f.read()
            assert not _memory_holds(pid, [token] + roster)
        assert _memory_holds(os.getpid(), [token])                        # the scan does find it where it is
        assert roster                                                     # (kept alive in this process)
    finally:
        z.close()


def _memory_holds(pid: int, needles: list[str]) -> bool:
    found = False
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            addr, perms = line.split()[:2]
            if "r" not in perms or "[vvar" in line or "[vsyscall" in line:
                continue
            start, end = (int(x, 16) for x in addr.split("-"))
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            found = found or any(n.encode() in chunk for n in needles)
    return found


def test_the_private_tmp_is_small_and_goes_with_the_part(zygote):  # noqa: F811
    """A part writes in its own /tmp (its cwd, a tmpfs of its own mount namespace) and nowhere else: one
    file, or all it writes there, stops at ``tmp_mb``; the tmpfs goes with the part, and bubblewrap's own
    /tmp, which the zygote would otherwise share out, is left as it was."""
    if not VIEW:                                # no private /tmp: the guard refuses any write
        result, _ = run_part(zygote, "attention", "import builtins\nbuiltins.open('/tmp/course-attack', 'w')\n"
                             + GOOD["attention"])
        assert result.status == "failed" and "writing" in result.message
        assert_contained(zygote)
        return
    source = ("def probe():\n    import os\n    n = 0\n    try:\n        with open('course-attack', 'wb') as f:\n"
              "            for _ in range(64):\n                f.write(b'x' * (1 << 20)); n += 1\n"
              "    except OSError as e:\n        return {'mb': n, 'error': type(e).__name__, 'cwd': os.getcwd()}\n"
              "    return {'mb': n}\n")
    before = set(_tmp_of(zygote))
    r = probe(zygote, source, opts=options(tmp_mb=8, max_file_mb=64))
    assert r["mb"] <= 8 and r["error"] == "OSError" and r["cwd"] == "/tmp"
    elsewhere = probe(zygote, "def probe():\n    r = {}\n"
                              "    for path in ('/course-attack', '/dev/shm/course-attack', '/dev/course-attack'):\n"
                              "        try:\n            open(path, 'w')\n            r[path] = 'written'\n"
                              "        except OSError as e:\n            r[path] = type(e).__name__\n    return r\n",
                      layers={"seccomp": False, "guard": False, "landlock": False})
    assert "written" not in elsewhere.values(), elsewhere              # the rest of the view: read-only
    many = ("import os\nfor i in range(4):\n    with open(f'course-attack-{i}', 'wb') as f:\n"
            "        f.write(b'x' * (3 << 20))\n")
    result, _ = run_part(zygote, "attention", many + GOOD["attention"], opts=options(tmp_mb=8, max_file_mb=64))
    assert result.status == "failed" and "OSError" in result.message, result.message    # the tmpfs is full
    result, _ = run_part(zygote, "attention", many.replace("4)", "2)") + GOOD["attention"],
                         opts=options(tmp_mb=8, max_file_mb=64))
    assert result.status == "passed", result.message                   # 6 MiB: within its 8
    assert set(_tmp_of(zygote)) == before
    assert_contained(zygote)


#: a part that leaves all it can in its /tmp (its cwd), where no one could remove it as the zygote once did
#: (a tree deeper than Python recurses, folders of mode 000, every inode used), and looks for other parts' files
LOOK = """
import os
def look():
    try:
        return sorted(os.listdir('/tmp'))
    except OSError as e:
        return type(e).__name__
"""
LITTER = LOOK + """
def probe():
    seen = look()
    top = os.getcwd()
    for i in range(15):                                 # 15 of its 16 MiB
        with open(f'course-attack-{i}', 'wb') as f:
            f.write(b'x' * (1 << 20))
    os.mkdir('deep')
    os.chdir('deep')
    for _ in range(1500):
        os.mkdir('d')
        os.chdir('d')
    made = 0
    try:
        while made < 5000:
            open(os.path.join(top, f'many-{made}'), 'w').close()
            made += 1
    except OSError:
        pass
    for path in ('deep', 'course-attack-0', ''):
        os.chmod(os.path.join(top, path), 0)
    return {'seen': seen, 'made': made}
"""

#: the next part: what it finds in /tmp, and whether its own 6 MiB fit in its cwd
NEXT = LOOK + """
def probe():
    seen = look()
    try:
        with open('mine', 'wb') as f:
            f.write(b'y' * (6 << 20))
        wrote = True
    except OSError as e:
        wrote = type(e).__name__
    return {'seen': seen, 'wrote': wrote}
"""


def _after_litter(z, layers: dict) -> tuple:
    """(the littering part's outcome, what the next part saw and wrote, its grading of a correct part) on
    zygote ``z``; the guard is off for the litter and the look (a part with raw memory switches it off)."""
    header, arrays = runner.request("attention", LITTER, CASES["attention"][:1], options(), z.read_roots,
                                    probe=True, layers=dict(layers, guard=False))
    litter = z.run(header, arrays)
    after = probe(z, NEXT, layers=dict(layers, guard=False))
    result, _ = run_part(z, "feed_forward", GOOD["feed_forward"], layers=layers)
    return litter, after, "passed" if result.passed else result.message


@pytest.mark.skipif(not VIEW, reason="no namespaces at this level: a part writes nothing at all")
def test_nothing_a_part_leaves_reaches_the_next_part(zygote):  # noqa: F811
    """Files, 000 modes, a tree 1,500 deep and every inode: the part's tmpfs goes with its mount namespace,
    so the next part finds an empty /tmp, writes its 6 MiB and grades in full; the zygote went on."""
    before = set(_tmp_of(zygote))
    litter, after, graded = _after_litter(zygote, {})
    assert litter.status == "ok", litter.failure
    made = litter.header["probe"].get("made", 0)
    assert litter.header["probe"] == {"seen": [], "made": made} and 0 < made < 5000   # its inodes are capped
    assert after == {"seen": [], "wrote": True} and graded == "passed"
    assert set(_tmp_of(zygote)) == before                              # nothing in bubblewrap's /tmp
    assert_contained(zygote)


@pytest.mark.skipif(not VIEW, reason="no namespaces at this level")
def test_without_the_parts_own_tmpfs_its_litter_reaches_the_next_part(zygote):  # noqa: F811
    """The counter-check: with the part's tmpfs removed (a directory of bubblewrap's shared /tmp, as before
    issue 48), the zygote cannot measure or remove the same litter, which stays, and the next part can no
    longer write its 6 MiB. (What stays is in the shared /tmp, which no part with its own tmpfs sees.)"""
    before = set(_tmp_of(zygote))
    litter, after, _ = _after_litter(zygote, {"tmpfs": False})
    assert litter.status == "student" and "/tmp" in litter.failure, litter.failure
    assert after["wrote"] != True, after                # noqa: E712 (the litter fills the shared /tmp)
    assert any(name.startswith("part-") for name in set(_tmp_of(zygote)) - before)
    assert_contained(zygote)


def _tmp_of(z) -> list:
    """What the sandbox's /tmp holds now, seen through the mount namespace of bubblewrap's children."""
    return os.listdir(f"/proc/{descendants(z.proc.pid)[0]}/root/tmp")


def _inner(z) -> int:
    """The zygote's own pid (bubblewrap's child), as this process sees it."""
    kids = descendants(z.proc.pid)
    return kids[-1] if kids else z.proc.pid


FORK_BOMB = """
import os, time
def probe():
    kids, refused = 0, 0
    for _ in range(60):
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            kids += 1
        except OSError:
            refused += 1
    try:
        block = bytearray(512 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        big = True
    except MemoryError:
        big = False
    return {'kids': kids, 'refused': refused, 'big': big}
"""


def test_a_part_is_one_process_so_its_memory_cap_is_the_whole_parts(zygote):  # noqa: F811
    """The kernel alone (no seccomp, no guard, no Landlock) refuses every fork of a part (RLIMIT_NPROC=1),
    so the part is one process and its RLIMIT_AS caps all it holds: 512 MiB under a 256 MiB cap fails."""
    header, arrays = runner.request("attention", FORK_BOMB, CASES["attention"][:1],
                                    options(memory_mb=256, timeout=8), zygote.read_roots, probe=True, layers=OFF)
    outcome = zygote.run(header, arrays)
    assert outcome.status == "ok", outcome.failure
    assert outcome.header["probe"] == {"kids": 0, "refused": 60, "big": False}
    assert outcome.survivors == 0
    assert_contained(zygote, outcome)


GRANDCHILD = """
import os, time
def probe():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open('/tmp/alive', 'w') as f:
                f.write(str(os.getpid()))
            while True:
                time.sleep(0.1)
        os._exit(0)
    while True:
        pass
"""


def test_a_grandchild_does_not_outlive_the_timeout(zygote):  # noqa: F811
    header, arrays = runner.request("attention", GRANDCHILD, CASES["attention"][:1], options(timeout=2),
                                    zygote.read_roots, probe=True, layers=OFF if VIEW else {},
                                    nproc=1000 if VIEW else 1)
    start = time.monotonic()
    outcome = zygote.run(header, arrays)
    assert outcome.status == "student" and ("timed out" in outcome.failure or not VIEW)
    assert time.monotonic() - start < 60                     # the part itself never ends
    assert outcome.survivors == 0
    assert processes_of(PART_UID, zygote.proc.pid) == []
    assert_contained(zygote, outcome)


def test_kill_everything_it_can_reach(zygote):  # noqa: F811
    """kill(-1) without seccomp and guard: only the part's own PID namespace is in reach (elsewhere:
    seccomp ends the part first)."""
    source = "import os\ndef probe():\n    os.kill(-1, 9)\n    return {}\n"
    header, arrays = runner.request("attention", source, CASES["attention"][:1], options(), zygote.read_roots,
                                    probe=True, layers=OFF if VIEW else {"guard": False})
    zygote.run(header, arrays)
    assert_contained(zygote)


def test_symlinked_submissions_are_not_followed(tmp_path):
    root = tmp_path / "submitted"
    real = root / "alice" / "07_exercise"
    real.mkdir(parents=True)
    (real / "nb.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    nb, problem = runner.read_notebook(str(real / "nb.ipynb"), str(root))
    assert problem is None and nb.cells == []
    cases = {"file": ("eve", lambda d: (d.mkdir(parents=True), (d / "nb.ipynb").symlink_to(real / "nb.ipynb"))),
             "folder": ("mallory", lambda d: (d.parent.mkdir(), d.symlink_to(real))),
             "root_only": ("trent", lambda d: (d.mkdir(parents=True), (d / "nb.ipynb").symlink_to("/etc/shadow"))),
             "extra_file": ("oscar", lambda d: (d.mkdir(parents=True), (d / "nb.ipynb").write_text("{}"),
                                                (d / "data.csv").symlink_to("/etc/passwd")))}
    for kind, (student, make) in cases.items():
        folder = root / student / "07_exercise"
        make(folder)
        nb, problem = runner.read_notebook(str(folder / "nb.ipynb"), str(root))
        assert nb is None and "symbolic link" in problem, kind
    verdicts = runner.invalid("the submission contains a symbolic link")
    assert all(v.status == "failed" for v in verdicts.values())


def test_parse_refuses_pickles_and_garbage():
    buf = io.BytesIO()
    np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        wire.parse(wire.frame(b'{"cases": []}') + wire.frame(buf.getvalue()))
    with pytest.raises(ValueError):
        wire.parse(b"\x00\x00\x00\x00\x00\x00\x00\x05{\"a\":")
    header, arrays = wire.parse(wire.frame(b'{"a": 1}') + wire.frame(wire.npy(np.zeros(())))
                                + wire.frame(wire.npy(np.ones((2, 3), dtype=np.float32).T)))
    assert header == {"a": 1} and arrays[0].shape == () and arrays[1].shape == (3, 2)
    assert arrays[1].dtype == np.float32 and arrays[1].flags.writeable and (arrays[1] == 1).all()

    def raw(desc: bytes, body: bytes = b"") -> bytes:
        return len(desc).to_bytes(2, "big") + desc + body
    for bad in (raw(b'{"dtype": "|O", "shape": [1]}', bytes(8)),            # objects
                raw(b'{"dtype": "i4,f8", "shape": [1]}', bytes(12)),        # a structured dtype
                raw(b'{"dtype": "<f8", "shape": [2]}', bytes(8)),           # fewer bytes than the shape
                raw(b'{"dtype": "<f8", "shape": [-1]}'),                    # a negative size
                raw(b'{"dtype": "<f8", "shape": [100000, 100000]}'),        # too large
                raw(b'{"shape": [1]}', bytes(8)), b"\x00"):
        with pytest.raises(ValueError):
            wire.parse(wire.frame(b'{"cases": []}') + wire.frame(bad))


def test_cases_keep_shared_tensors_shared():
    import torch
    q = torch.randn(2, 3)
    arrays: list = []
    value = wire.decode(wire.encode({"query": q, "key": q, "n": 3, "t": (1, 2)}, arrays), arrays)
    assert value["query"] is value["key"] and torch.equal(value["query"], q) and value["t"] == (1, 2)


def test_a_zygote_is_sent_a_parts_cases_once():
    """The second request names the cases by their key (no arrays) and gets the same outputs; a key the
    zygote never got is the sandbox's failure (a grader error), and the new zygote is sent them again."""
    z = sandbox.Zygote(LEVEL)
    try:
        def send():
            header, arrays = runner.request("attention", GOOD["attention"], CASES["attention"], options(),
                                            z.read_roots, z.known_cases)
            return header, arrays, z.run(header, arrays)
        first_header, first_arrays, first = send()
        again_header, again_arrays, again = send()
        assert first_header["cases"] and first_arrays and again_header["cases"] is None and again_arrays == []
        assert first.status == again.status == "ok" and first.header == again.header
        assert all(np.array_equal(a, b) for a, b in zip(first.arrays, again.arrays, strict=True))
        forged = z.run(dict(again_header, cases_key="0" * 32), [])
        assert forged.status == "grader" and z.known_cases == set()
        assert send()[0]["cases"] and send()[2].status == "ok"
    finally:
        z.close()


def test_outcomes_from_the_part_are_never_grader_errors():
    """Only the sandbox's own channels (set-up errors, survivors) make a grader error."""
    part_says = sandbox.interpret({"wait_status": 0}, wire.frame(b'{"sandbox_error": "could not grade"}'), 5)
    assert part_says.status == "ok"
    assert sandbox.interpret({"tattle": "could not grade"}, b"", 5).status == "student"
    assert sandbox.interpret({"wait_status": 31}, b"", 5).status == "student"             # SIGSYS
    assert sandbox.interpret({"setup_error": "OSError: mount"}, b"", 5).status == "grader"
    assert sandbox.interpret({"survivors": 2}, b"", 5).status == "grader"


@pytest.mark.parametrize("source, ok", [
    ("def f(q):\n    return torch.softmax(q, -1)\n", True),
    ("import math\nimport torch.nn.functional as F\nfrom torch import nn\n", True),
    ("import warnings\nwarnings.warn('fine')\n", True),
    ("import os\n", False),
    ("from course_lib import Encoder\n", False),
    ("x = F.scaled_dot_product_attention(q, k, v)\n", False),
    ("m = nn.MultiheadAttention(8, 2)\n", False),
    ("f = getattr(F, 'scaled_dot_product_attention')\n", False),
    ("open('/etc/passwd')\n", False),
    ("m = torch.sys.modules\n", False),
    ("f = torch.ops.aten.mm\n", False),
    ("y = scaled_dot_product_attention(q, k, v)\n", True),
])
def test_policy(source, ok):
    """The static policy: the first, cheap layer (the attacks in test_attacks.py get past it)."""
    assert (policy.check_source(source) is None) == ok, policy.check_source(source)


def test_part_of_test_prefers_the_longest_name():
    assert part_of_test("test_encoder_layer") == "encoder_layer"
    assert part_of_test("test_encoder") == "encoder"
    assert part_of_test("test_multi_head_attention") == "multi_head_attention"
    assert part_of_test("answer_cost") is None


def test_the_reference_sources_lack_the_graded_part():
    from course_grader import references
    modules, exports = references.for_part("encoder")
    text = "\n".join(src for _, src in modules)
    assert not re.search(r"^class Encoder\b", text, re.M) and re.search(r"^class EncoderLayer\b", text, re.M)
    assert set(exports) == {"EncoderLayer", "sinusoidal_positional_encoding"}
    modules, _ = references.for_part("multi_head_attention")
    assert not any(re.search(r"^class MultiHeadAttention\b", src, re.M) for _, src in modules)
    assert GOOD["attention"]


def test_without_bubblewrap_the_grader_refuses_and_says_how_to_install_it(monkeypatch):
    """No bwrap: auto and the namespace levels refuse with the install line; a weak level asked for by
    name (a throw-away VM) still runs."""
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    for level in ("auto", "root", "userns"):
        with pytest.raises(sandbox.SandboxError, match="apt install bubblewrap"):
            sandbox.detect_level(level)
    assert sandbox.detect_level("rlimits") == "rlimits"


def test_a_bubblewrap_that_cannot_make_its_sandbox_is_named_with_the_fix(monkeypatch, tmp_path):
    """bwrap there but refused its namespaces (Ubuntu 24.04's AppArmor restriction prints this): the
    grader does not fall to a weak level; it says what bwrap said, and the administrator's fix."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox, "bwrap", lambda: str(fake))
    with pytest.raises(sandbox.WeakSandbox) as refused:
        sandbox.detect_level()
    text = str(refused.value)
    assert "Failed RTM_NEWADDR" in text and "bwrap-userns-restrict" in text
    assert "kernel.apparmor_restrict_unprivileged_userns" in text and "--sandbox" in text


def test_a_python_under_tmp_stays_in_the_view():
    """bubblewrap mounts in order: the private /tmp comes before the binds, or a virtual environment in a
    clone under /tmp (as CI makes one) would be hidden under the tmpfs (the zygote: no module numpy)."""
    venv = "/tmp/ci/repo/.venv/lib/python3.11/site-packages"
    argv = sandbox.bwrap_argv("root", {"readonly": ["/usr/local/lib/python3.11", venv]})
    pairs = list(zip(argv, argv[1:]))
    assert pairs.index(("--tmpfs", "/tmp")) < pairs.index(("--ro-bind", venv))
    assert pairs.index(("--proc", "/proc")) < pairs.index(("--ro-bind", venv))
