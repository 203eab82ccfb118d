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
  kernel and never by a user) of its folder and files, both for choosing a student's latest
  submission and in the ``timestamp.txt`` written into ``submitted/`` (the student's own is replaced).

Everything else is nbgrader's (``--update``, ``--before-duedate``, the gradebook's due date).
"""

from __future__ import annotations

import datetime
import os
import pwd
import stat
import sys

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import parse_utc

TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"


def server_time(folder: str) -> datetime.datetime:
    """The latest ``st_ctime`` of ``folder`` and what is in it, as nbgrader's UTC timestamps are."""
    latest = os.lstat(folder).st_ctime
    for where, dirs, files in os.walk(folder):
        for name in dirs + files:
            latest = max(latest, os.lstat(os.path.join(where, name)).st_ctime)
    return parse_utc(datetime.datetime.fromtimestamp(latest, datetime.UTC).strftime(TIME_FORMAT))


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
            record["timestamp"] = server_time(path)
        return record

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

    def do_copy(self, src, dest, log=None):
        when = server_time(src)
        super().do_copy(src, dest, log)
        with open(os.path.join(dest, "timestamp.txt"), "w", encoding="utf-8") as f:
            f.write(when.strftime(TIME_FORMAT))


def main(argv: list) -> int:
    """nbgrader's CollectApp with :class:`ServerCollect` as the exchange's collect step."""
    from nbgrader.apps.collectapp import CollectApp
    CollectApp.launch_instance(argv=["--ExchangeFactory.collect=course_grader.collect.ServerCollect", *argv])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
