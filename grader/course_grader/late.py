"""The late penalty, computed last: from the final total (autograded + by hand) and the LMS's lateness.

nbgrader fixes a notebook's ``late_submission_penalty`` when it autogrades, from the autograded score and
the ``timestamp.txt`` it finds then. Hand grades come later, and a time written later (``lms-times``
after ``autograde``) is never seen; so the penalty is computed again, from what is true at the end, by
every step that hands a score out: ``scores``, ``moodle-grades``, ``canvas-grades`` (through
:func:`settle`) and ``nbgrader generate_feedback`` (the preprocessor :class:`SettleLatePenalty`, before
``GetGrades``). The policy is the course's own: the ``LateSubmissionPlugin`` that ``nbgrader_config.py``
configures (``c.AssignLatePenalties.plugin_class``, ``c.LateSubmissionPlugin.penalty_method``), called as
nbgrader calls it and clamped as nbgrader clamps it (0 to the notebook's score). It is written into the
gradebook, so ``nbgrader export`` and the formgrader show the same number.

The lateness: where ``lms-times`` kept a record for the notebook now in ``submitted/`` (its digest
matches), the LMS's own count (Canvas's ``seconds_late``, the student's own due date, excused: none); a
student without one, in a class whose times come from the LMS, is ``stale`` (downloaded again since) or
``no LMS time``, and no step hands their score out. A class without ``lms-times`` (the hub's exchange)
keeps nbgrader's lateness: ``timestamp.txt`` against the due date and the student's extension.
"""

from __future__ import annotations

import os
from datetime import datetime

from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.preprocessors.latesubmissions import AssignLatePenalties
from traitlets.config import Config

from .feedback import display_data_priority
from .lms import NBGRADER_TIME, kept_times, time_for

CONFIG = "nbgrader_config.py"
FINE = ("on time", "late", "excused")          # a lateness the score can be handed out with


def course_config(root: str) -> Config:
    """nbgrader's configuration as its commands load it: the Jupyter config folders, then the course's
    ``nbgrader_config.py`` (``root``)."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config.loader import PyFileConfigLoader

    config = Config()
    for folder in [*reversed(jupyter_config_path()), root]:
        if os.path.isfile(os.path.join(folder, CONFIG)):
            config.merge(PyFileConfigLoader(CONFIG, path=folder).load_config())
    return config


class _Penalties(AssignLatePenalties):
    """nbgrader's step, declaring the option generate_feedback sets on every step (no traitlets warning)."""

    display_data_priority = display_data_priority()


def policy(config: Config | None = None, parent=None) -> AssignLatePenalties:
    """nbgrader's own ``AssignLatePenalties`` with the course's plugin: its ``plugin_inst`` is the policy,
    its ``_check_late_penalty`` nbgrader's clamp."""
    assign = _Penalties(parent=parent) if parent is not None else _Penalties(config=config)
    assign.init_plugin()
    return assign


def lateness(root: str, assignment: str, sub, kept: dict[str, dict]) -> tuple[str, float]:
    """``(status, seconds late)`` of one gradebook submission: status ``on time``, ``late``, ``excused``,
    ``stale`` (the LMS's time was taken for another notebook) or ``no LMS time``."""
    student = sub.student.id
    if kept:
        record = time_for(root, assignment, student, kept)
        if record is None:
            return ("stale" if student in kept else "no LMS time"), 0.0
        if record.get("excused"):
            return "excused", 0.0
        seconds = record.get("seconds_late")
        if seconds is None:                       # the LMS gave no lateness: its time against the due date
            due = sub.duedate
            when = datetime.strptime(record["timestamp"], NBGRADER_TIME)
            seconds = max(0.0, (when - due).total_seconds()) if due is not None else 0.0
    else:
        seconds = sub.total_seconds_late
    return ("late" if seconds > 0 else "on time"), float(seconds)


def settle(gb: Gradebook, root: str, assignment: str, assign: AssignLatePenalties,
           students: set | None = None) -> dict[str, tuple[str, float]]:
    """Write each submission's late penalty from its final total; returns ``{student: (status, seconds
    late)}``. A submission whose lateness is unknown (``stale``, ``no LMS time``) keeps no penalty: no
    step hands its score out until ``lms-times`` has run on a fresh export."""
    kept = kept_times(root, assignment)
    out = {}
    subs = (gb.assignment_submissions(assignment) if students is None
            else [gb.find_submission(assignment, student) for student in sorted(students)])
    for sub in subs:
        status, seconds = lateness(root, assignment, sub, kept)
        for notebook in sub.notebooks:
            penalty = None
            if seconds > 0:
                penalty = assign.plugin_inst.late_submission_penalty(sub.student.id, notebook.score, seconds)
                if penalty is not None:
                    penalty = assign._check_late_penalty(notebook, penalty)
            notebook.late_submission_penalty = penalty
        out[sub.student.id] = (status, seconds)
    gb.db.commit()
    return out


class SettleLatePenalty(NbGraderPreprocessor):
    """``generate_feedback``'s first step (before ``GetGrades``): the student's late penalty from the final
    total, as :func:`settle`. A submission whose lateness is unknown gets no feedback page (an error that
    names it): run ``lms-times`` on a fresh export first."""

    display_data_priority = display_data_priority()          # generate_feedback sets it: no warning

    def preprocess(self, nb, resources):
        from nbgrader.coursedir import CourseDirectory

        info = resources["nbgrader"]
        root = CourseDirectory(parent=self).root
        with Gradebook(info["db_url"]) as gb:
            status = settle(gb, root, info["assignment"], policy(parent=self), {info["student"]})
        state = status.get(info["student"], ("on time", 0))[0]
        if state not in FINE:
            raise ValueError(f"{info['student']}: {state} (the LMS's submission time is not for this notebook): "
                             f"run python -m course_grader lms-times {info['assignment']} on a fresh export first")
        return nb, resources
