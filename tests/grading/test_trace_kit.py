"""The traced-reads checker (tests/grading/trace_kit.py) on a synthetic strace log: it finds a part's
successful read of another student's file and fails the promise, whatever path the part gave; it counts
neither the grader's own reads nor bubblewrap's set-up; a failed try is reported as a try. Cheap: no
process is started. (The real plant, the course bound into the sandbox's view, is described in
tests/grading/test_lms_end_to_end.py.)"""

from __future__ import annotations

from trace_kit import confined_reads, parse

#: the grader (100) reads 1001's notebook and starts bubblewrap (101), whose namespace's first process
#: (102) starts the zygote (103, pid 2 inside), which forks a part (104, pid 3 inside): the part's first
#: calls are logged before its parent's fork returns, as strace does when the child runs first
LOG = r"""100 execve("/venv/bin/python", ["python", "-m", "course_grader", "autograde"], 0x7ffc /* 3 vars */) = 0
100 openat(AT_FDCWD</c>, "submitted/1001/a/nb.ipynb", O_RDONLY|O_NOFOLLOW) = 3</c/submitted/1001/a/nb.ipynb>
100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f90) = 101
101 chdir("/") = 0
101 execve("/usr/bin/bwrap", ["/usr/bin/bwrap", "--unshare-pid"], 0x55bb /* 8 vars */) = 0
101 openat(AT_FDCWD</>, "/c/submitted", O_RDONLY|O_CLOEXEC|O_PATH) = 5</c/submitted>
101 clone(child_stack=NULL, flags=CLONE_NEWNS|CLONE_NEWPID|SIGCHLD) = 102
102 clone(child_stack=NULL, flags=SIGCHLD, child_tidptr=0x7f14) = 2 /* 103 in strace's PID NS */
103 execve("/usr/bin/python3", ["/usr/bin/python3", "-I", "-S", "/grader/zygote.py", "{}"], 0x5608 /* 8 vars */) = 0
103 openat(AT_FDCWD</>, "/usr/lib/python3/os.py", O_RDONLY|O_CLOEXEC) = 3</usr/lib/python3/os.py>
103 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>
104 chdir("/tmp") = 0
104 openat(AT_FDCWD</tmp>, "../c/submitted/1002/a/nb.ipynb", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)
104 openat(AT_FDCWD</tmp>, "/proc/self/cwd/../c/submitted/1002/n\303\251.txt", 0) = 6</c/submitted/1002/n\303\251.txt>
104 openat(AT_FDCWD</tmp>, "/c/autograded/1001/a/nb.ipynb", O_RDONLY|O_CLOEXEC <unfinished ...>
103 <... clone resumed>, child_tidptr=0x7f15) = 3 /* 104 in strace's PID NS */
104 <... openat resumed>) = -1 EACCES (Permission denied)
104 +++ exited with 0 +++
"""
STUDENTS = {s: [f"/c/{where}/{s}" for where in ("submitted", "autograded")] for s in ("1001", "1002")}


def test_a_part_s_successful_read_of_a_student_s_file_is_found_by_the_path_the_kernel_resolved():
    trace = parse(LOG, "/c")
    assert trace.confined() == {101, 102, 103, 104}
    assert {e.pid for e in trace.confined_events()} == {103, 104}          # bwrap's own set-up left out
    reads = trace.reads_of_other_students(STUDENTS)
    assert [(r.pid, r.path, r.ok, r.error, r.student) for r in reads] == [
        (104, "/c/submitted/1002/a/nb.ipynb", False, "ENOENT", "1002"),
        (104, "/c/submitted/1002/né.txt", True, "", "1002"),
        (104, "/c/autograded/1001/a/nb.ipynb", False, "EACCES", "1001")]
    assert [str(r) for r in reads if r.ok] == ["pid 104 opened /c/submitted/1002/né.txt of 1002 by openat"]


def test_only_confined_processes_are_judged_and_the_view_is_checked_too():
    trace = parse(LOG, "/c")
    assert [e.path for e in trace.opened_outside(["/usr", "/tmp", "/dev", "/proc"])] == ["/c/submitted/1002/né.txt"]
    assert trace.opened_outside(["/usr", "/c"], never=["/c"])[0].pid == 104
    without_part = "\n".join(line for line in LOG.splitlines() if not line.startswith("104 "))
    clean = parse(without_part, "/c")                        # the grader and bubblewrap opened 1001's: fine
    assert clean.reads_of_other_students(STUDENTS) == [] and clean.opened_outside(["/usr"]) == []
    assert [e.path for e in trace.attempts()] == ["/c/submitted/1002/a/nb.ipynb", "/c/autograded/1001/a/nb.ipynb"]
    assert [e.asked for e in trace.attempts()][0] == "../c/submitted/1002/a/nb.ipynb"


def test_confined_reads_over_several_commands_names_each_broken_promise():
    broken, tries = confined_reads({"autograde": parse(LOG, "/c"), "feedback": parse(LOG.split("101 ")[0], "/c")},
                                   STUDENTS, "/c")
    assert broken == ["autograde: pid 104 opened /c/submitted/1002/né.txt of 1002 by openat",
                      "autograde: pid 104 opened /c/submitted/1002/né.txt, outside the view"]
    assert [e.error for e in tries] == ["ENOENT", "EACCES"]
