"""The formgrader's page of a submission, offline: maths drawn by the browser, long lines wrapped.

nbgrader's formgrader renders each autograded notebook with nbconvert's HTMLExporter and its
``formgrade`` template, which loads MathJax from a CDN (offline, an instructor reads TeX source) and
lets a long message or code line run off the page. nbgrader_config.py adds to that exporter:

* :class:`FormgradeMathToMathML`, the feedback's :class:`~course_grader.feedback.MathToMathML` (TeX
  of the markdown cells as MathML, the exercise's figures inside the page), on the formgrade page only;
* ``templates/formgrade/mathjax.html.j2``, which takes the place of nbconvert's MathJax macro in the
  page's head: no CDN, a stand-in for the one MathJax call nbgrader's formgrade.js makes, and the
  style sheet that wraps long lines.
"""

from __future__ import annotations

from .feedback import MathToMathML
from .recording import SanitizeStudentCells


class FormgradeMathToMathML(MathToMathML):
    """:class:`~course_grader.feedback.MathToMathML` where the exporter renders the ``formgrade``
    template. ``generate_feedback``'s HTMLExporter reads the same ``HTMLExporter.preprocessors`` and
    runs them first: there it does nothing, and the feedback's own MathToMathML runs after the
    student's cells are made inert (MathML written before would be escaped into text)."""

    def preprocess(self, nb, resources):
        if getattr(self.parent, "template_name", None) != "formgrade":
            return nb, resources
        return super().preprocess(nb, resources)


class FormgradeSanitize(SanitizeStudentCells):
    """The gate out on the formgrader's page of a submission (issue 48 items 5, 6): what the student wrote
    and printed goes through :mod:`.html_out`'s allow-list again as the page is rendered (no ``<style>``,
    no image or style sheet from elsewhere), also in a notebook autograded
    before the allow-list said so; the page's head carries :data:`.html_out.FORMGRADE_CSP`
    (templates/formgrade/mathjax.html.j2). Nothing the student wrote keeps an ``id`` or a ``name``, and
    markdown leaves as HTML whose headings have none: the formgrader's script finds each score box as
    the first element of its grade_id, and a ``<span id="answer_b">`` or a heading "## answer_b" in an
    earlier answer was that element (fifth round). Elsewhere (``generate_feedback`` runs HTMLExporter's
    preprocessors too, and sanitizes on its own) it does nothing."""

    ids = False

    def preprocess(self, nb, resources):
        if getattr(self.parent, "template_name", None) != "formgrade":
            return nb, resources
        return super().preprocess(nb, resources)


#: what the formgrader's Autograde and Collect buttons answer: plain nbgrader would run a student's code
#: unconfined with the grading account's rights (and replace the sandbox's results), on the service TAs reach
SWITCHED_OFF = {
    "autograde": "The formgrader's Autograde is switched off for this course: it would run the submission "
                 "unsandboxed. Run `python -m course_grader autograde ASSIGNMENT --student ID` (docs/instructors.md).",
    "collect": "The formgrader's Collect is switched off for this course: plain nbgrader collect takes a folder "
               "on the student's word. Run `python -m course_grader collect ASSIGNMENT` (docs/jupyterhub.md).",
}


def switch_off_plain_actions() -> None:
    """nbgrader's NbGraderAPI (behind the formgrader's buttons) answers Autograde and Collect with
    :data:`SWITCHED_OFF`'s messages, which the formgrader shows, instead of running them unsandboxed."""
    from nbgrader.apps.api import NbGraderAPI

    def refuse(action):
        def answer(self, *args, **kwargs):
            return {"success": False, "error": SWITCHED_OFF[action], "log": SWITCHED_OFF[action]}
        answer.switched_off = True
        return answer
    for action in SWITCHED_OFF:
        if not getattr(getattr(NbGraderAPI, action), "switched_off", False):
            setattr(NbGraderAPI, action, refuse(action))
