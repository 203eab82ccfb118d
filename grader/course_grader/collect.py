"""``python -m course_grader collect ASSIGNMENT``: nbgrader's ``collect`` from the hub's exchange, with
the two things the plain exchange takes on the student's word checked by the server.

nbgrader's exchange is a shared folder: every student can write any folder into ``inbound/``, named
``<student>+<assignment>+<time>``, holding any ``timestamp.txt``. Plain ``nbgrader collect`` only warns
when a folder's owner is not the student it names (so one student can replace another's submission),
and takes the submission time from the folder's name and the student's ``timestamp.txt`` (so a late
submission can be dated on time). :class:`ServerCollect` is nbgrader's default ``ExchangeCollect`` with:

* **owners**: a folder is collected only if it, and everything in it, belongs to the uid of the
  account the folder names (``pwd``); no symbolic or hard link inside. Any other folder is refused,
  said in the log (quoted), and never chosen over the student's own;
* **the server's time**: a submission's time is the latest status change (``st_ctime``, set by the
  kernel and never by a user) of its folder and the files it copies (not the student's ``timestamp.txt``),
  both for choosing a student's latest submission and in the ``timestamp.txt`` written into ``submitted/``
  (the student's own is replaced), so ``--update`` collects again only a folder changed since its copy;
* **a copy that checks what it copied** (:func:`course_grader.files_in.copy_tree`): every file is
  opened relative to its folder's descriptor without following a link, checked on that descriptor
  (a regular file of one name, the student's own) and copied into a private staging folder beside
  ``submitted/``, which then takes the old submission's place. There is no check-then-copy window: a
  student who swaps a file for a link to a classmate's while collect runs gets a refusal, not the
  classmate's notebook. A link, a named pipe, a folder named ``timestamp.txt``, a file too large or
  too deep is refused for that student alone, said in the log, and the class goes on (exit 0).

Everything else is nbgrader's (``--update``, ``--before-duedate``, the gradebook's due date).
"""

from __future__ import annotations

import datetime
import fnmatch
import os
import pwd
import shutil
import stat
import sys
import tempfile

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc

from .files_in import Limits, Refused, copy_tree, open_dir

TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"


def _utc(ctime: float) -> datetime.datetime:
    return parse_utc(datetime.datetime.fromtimestamp(ctime, datetime.UTC).strftime(TIME_FORMAT))


def server_time(folder: str, skip=lambda name, depth: False) -> datetime.datetime:
    """The latest ``st_ctime`` of ``folder`` and what is in it but what ``skip(name, depth)`` leaves out
    (depth 0: the folder's own entries), as nbgrader's UTC timestamps are: the time :func:`.files_in.
    copy_tree` gives the copy, measured before copying (to choose among a student's folders, and to tell
    ``--update`` whether one is newer than the copy in ``submitted/``). It must skip what the copy skips:
    the hub's *Submit* writes ``timestamp.txt`` last, and with it counted here an unchanged folder was
    always newer than its copy, so every ``collect --update`` collected the whole class again, each
    student an "Updating submission" in the log."""
    latest = os.lstat(folder).st_ctime
    for where, dirs, files in os.walk(folder):
        depth = 0 if where == folder else os.path.relpath(where, folder).count(os.sep) + 1
        dirs[:] = [d for d in dirs if not skip(d, depth)]
        for name in dirs + [f for f in files if not skip(f, depth)]:
            latest = max(latest, os.lstat(os.path.join(where, name)).st_ctime)
    return _utc(latest)


def refused(folder: str, student: str) -> str | None:
    """Why ``folder`` is not ``student``'s submission, or None."""
    try:
        uid = pwd.getpwnam(student).pw_uid
    except KeyError:
        return f"no account is named {ascii(student)}"
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if info.st_uid != uid:
        return f"the folder belongs to uid {info.st_uid}, not to {ascii(student)} (uid {uid})"
    for where, dirs, files in os.walk(folder):
        for name in dirs + files:
            entry = os.lstat(os.path.join(where, name))
            if stat.S_ISLNK(entry.st_mode):
                return f"it holds a symbolic link ({ascii(name)})"
            if not stat.S_ISDIR(entry.st_mode) and entry.st_nlink > 1:
                return f"it holds a hard link ({ascii(name)})"
            if entry.st_uid != uid:
                return f"{ascii(name)} belongs to uid {entry.st_uid}, not to {ascii(student)}"
    return None


class ServerCollect(ExchangeCollect):
    """nbgrader's ExchangeCollect: folders whose owner is not the student they name are refused, and
    the time of a submission is the server's (see the module's docstring)."""

    def _path_to_record(self, path):
        record = super()._path_to_record(path)              # (its timestamp is the student's: replaced)
        record["refused"] = refused(path, record["username"])
        if record["refused"] is None:
            record["timestamp"] = server_time(path, self.skip)
        return record

    def skip(self, name: str, depth: int) -> bool:
        """Not copied (nor counted in the time): nbgrader's ignore patterns, and the student's own
        ``timestamp.txt`` (the server writes its own)."""
        return any(fnmatch.fnmatch(name, p) for p in self.coursedir.ignore) or (depth == 0 and name == "timestamp.txt")

    def init_src(self):
        """nbgrader's ``init_src`` (one submission a student: the latest, or the latest before the due
        date with ``--before-duedate``), from the folders this student owns, dated by the server."""
        import glob
        from itertools import groupby

        from nbgrader.api import Gradebook, MissingEntry
        from nbgrader.utils import check_mode
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        student_id = self.coursedir.student_id if self.coursedir.student_id else "*"      # the instructor's pattern
        pattern = os.path.join(self.inbound_path, f"{student_id}+{glob.escape(self.coursedir.assignment_id)}+*")
        records = []
        for path in sorted(glob.glob(pattern)):
            try:
                record = self._path_to_record(path)
            except Exception:                                # noqa: BLE001 (a name nbgrader cannot parse)
                self.log.warning("Not collected: %s: not a submission's name", ascii(os.path.basename(path)))
                continue
            if record["refused"]:
                self.log.warning("Not collected: %s: %s", ascii(os.path.basename(path)), record["refused"])
            else:
                records.append(record)
        records.sort(key=lambda item: item["username"])
        usergroups = {k: list(v) for k, v in groupby(records, lambda item: item["username"])}
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for group in usergroups.values():
            ordered = self._sort_by_timestamp(group)
            if self.duedate is not None and self.before_duedate:
                before = [r for r in ordered if r["timestamp"] <= self.duedate]
                ordered = before or ordered
            self.src_records.append(ordered[0])

    def stage(self, src: str, student: str) -> tuple[str, datetime.datetime]:
        """(a private staging folder holding the checked copy of ``src``, the server's time of what was
        copied), or :class:`Refused`. The student's ``timestamp.txt`` is not copied (the server writes
        its own) but must be a regular file; nbgrader's ignore patterns and file size hold."""
        uid = pwd.getpwnam(student).pw_uid
        submitted = self.coursedir.format_path(self.coursedir.submitted_directory, ".", ".")
        os.makedirs(submitted, mode=0o700, exist_ok=True)
        place = tempfile.mkdtemp(prefix=".collect-", dir=submitted)          # 0700, the grader's
        limits = Limits(file_bytes=max(1, int(self.coursedir.max_file_size)) * 1000,
                        total_bytes=max(1, int(self.coursedir.max_dir_size)) * 1000)
        inbound = open_dir(self.inbound_path)
        try:
            folder = open_dir(os.path.basename(src), inbound)
            try:
                stamp = os.stat("timestamp.txt", dir_fd=folder, follow_symlinks=False) if "timestamp.txt" in \
                    os.listdir(folder) else None
                if stamp is not None and not stat.S_ISREG(stamp.st_mode):
                    raise Refused("its timestamp.txt is not a regular file")
                ctime = copy_tree(folder, os.path.join(place, "copy"), uid, limits, self.skip)
            finally:
                os.close(folder)
        except BaseException:
            shutil.rmtree(place, ignore_errors=True)
            raise
        finally:
            os.close(inbound)
        return place, _utc(ctime)

    def copy_files(self):
        """nbgrader's ``copy_files`` (``--update``, ``--before-duedate``), each submission copied by
        :meth:`stage` first: a refused one is logged and skipped, the old copy kept, the class goes on."""
        if not self.src_records:
            self.log.warning("No submissions of %s for course %s to collect", ascii(self.coursedir.assignment_id),
                             ascii(self.coursedir.course_id))
        for rec in self.src_records:
            student = rec["username"]
            src = os.path.join(self.inbound_path, rec["filename"])
            dest = self.coursedir.format_path(self.coursedir.submitted_directory, student,
                                              self.coursedir.assignment_id)
            updating = os.path.isdir(dest)
            if updating:
                old = self.coursedir.get_existing_timestamp(dest)
                if not ((self.update and (old is None or rec["timestamp"] > old))
                        or (self.before_duedate and old != rec["timestamp"])):
                    self.log.info("No newer submission to collect: %s %s", student, self.coursedir.assignment_id)
                    continue
            try:
                place, when = self.stage(src, student)
            except (Refused, OSError) as e:
                self.log.warning("Not collected: %s: %s", ascii(rec["filename"]),
                                 e if isinstance(e, Refused) else f"it could not be copied ({e.strerror})")
                continue
            with open(os.path.join(place, "copy", "timestamp.txt"), "x", encoding="utf-8") as f:
                f.write(when.strftime(TIME_FORMAT))
            os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
            if updating:
                self.log.info("Updating submission: %s %s", student, self.coursedir.assignment_id)
                shutil.rmtree(dest)
            else:
                self.log.info("Collecting submission: %s %s", student, self.coursedir.assignment_id)
            os.rename(os.path.join(place, "copy"), dest)
            os.rmdir(place)


def main(argv: list) -> int:
    """nbgrader's CollectApp with :class:`ServerCollect` as the exchange's collect step."""
    from nbgrader.apps.collectapp import CollectApp
    CollectApp.launch_instance(argv=["--ExchangeFactory.collect=course_grader.collect.ServerCollect", *argv])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
