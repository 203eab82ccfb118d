"""nbgrader configuration of the course (the exercise in notebooks/07_exercise is the assignment).

The course root is this file's directory wherever the repository is cloned, so the commands of the
README's "For instructors" section work from the repository root, and `make lab` (which starts
JupyterLab from here with --notebook-dir=notebooks) finds this file for the nbgrader extension.
"""

import os
import sys

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "transformer-encoder-hands-on"
c.CourseDirectory.source_directory = "notebooks"        # notebooks/07_exercise/ is the source
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]

# nbgrader's own `autograde` and `validate` run the notebook in a kernel. The exercise needs about
# 10 s in all on a laptop CPU; 60 s per cell leaves room for a slow machine without letting an
# endless loop hold the batch for nbgrader's default 30 s per cell times many cells.
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True

# `nbgrader validate` prints each failing part's message whole, wrapped at its 90 columns (nbgrader
# would cut it there, diagnosis and all): see course_lib/grading/validation.py. It replaces a private
# method of nbgrader's; with an nbgrader that has none, it says so on stderr and the rest of this file
# still applies (an exception here would make traitlets ignore the whole file).
from course_lib.grading.validation import NbgraderChanged, wrap_long_lines  # noqa: E402

try:
    wrap_long_lines()
except NbgraderChanged as e:
    print(f"nbgrader_config.py: {e}", file=sys.stderr)

# Deleted test cells come back (from the gradebook) and are graded, rather than silently missing.
c.OverwriteCells.add_missing_cells = True

# The sandboxed grader (python -m course_grader autograde 07_exercise): see grader/course_grader.
c.SandboxGrader.jobs = 2                 # submissions graded in parallel (one per CPU core)
c.SandboxGrader.part_timeout = 20.0      # wall-clock seconds per part; a correct part needs < 1 s
c.SandboxGrader.memory_mb = 2048         # address space a part may add
c.SandboxGrader.uid = 65534              # grading as root: the student's code runs as nobody (65534),
c.SandboxGrader.gid = 65534              # which owns nothing in the sandbox's view (-1 means the same)


# Feedback goes to the students: it must not show the hidden tests (their seeds would let a student
# reproduce the hidden cases), and it must work offline. generate_feedback removes the hidden blocks
# of the test cells (a student's own cells are left as written), names each graded cell after its
# part in the page's list of scores, gives the figures the student's code drew alt text, writes the
# maths as MathML, puts the exercise's figures into the page (the HTML is all a student gets back),
# and uses a copy of nbgrader's page that wraps long messages and loads no MathJax from a CDN: see
# grader/course_grader/feedback.py and its templates/.
# What a student wrote (markdown, outputs) is made inert again here (recording.SanitizeStudentCells),
# also for a notebook autograded before the grader did it itself.
try:                                      # the grader's package: an instructor's install, not a student's
    from course_grader.feedback import (  # noqa: E402
        TEMPLATES,
        CleanHTMLExporter,
        ClearHiddenTestsInTestCells,
        DescribeFigures,
        MathToMathML,
        NameGradedCells,
    )
    from course_grader.formgrade import (  # noqa: E402
        FormgradeMathToMathML,
        FormgradeSanitize,
        switch_off_plain_actions,
    )
    from course_grader.late import SettleLatePenalty  # noqa: E402
    from course_grader.lms_in import switch_off_zip_collect  # noqa: E402
    from course_grader.recording import SanitizeStudentCells  # noqa: E402
except ImportError:                       # a student's JupyterLab (Validate) needs none of this
    TEMPLATES = None
if TEMPLATES is not None:
    import nbgrader  # noqa: E402
    if os.path.basename(sys.argv[0]) == "nbgrader":      # nbgrader's commands (not the Jupyter server's)
        from course_grader.terminal_out import install  # noqa: E402
        install()                # control bytes in nbgrader's log lines shown escaped (course_grader/terminal_out.py)
        os.umask(0o077)          # what nbgrader writes here (feedback, grades.csv) is the instructor's alone
    # The formgrader's Autograde and Collect buttons would run plain nbgrader (unsandboxed, a folder taken on
    # the student's word): they answer with the sandboxed command to run instead (course_grader/formgrade.py).
    switch_off_plain_actions()
    # An LMS download enters by `python -m course_grader lms-collect` alone: nbgrader's zip_collect unpacks
    # archives a student uploaded and matches names on the whole path (course_grader/lms_in.py).
    switch_off_zip_collect()
    # `nbgrader collect` on the command line is the server-side collect too: a folder in the exchange is
    # taken only from the account it names, at the server's time, copied by descriptor (course_grader/collect.py).
    c.ExchangeFactory.collect = "course_grader.collect.ServerCollect"
    c.Autograde.permissions = 600            # autograded notebooks: the instructor's alone (nbgrader: 444)
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
    from nbgrader.preprocessors import GetGrades  # noqa: E402

    # The late penalty first, from the final total (hand grades included) and the LMS's lateness
    # (course_grader/late.py): nbgrader fixed it at autograde time, from the autograded points alone.
    c.GenerateFeedback.preprocessors = [SettleLatePenalty, GetGrades, SanitizeStudentCells, ClearHiddenTestsInTestCells,
                                       NameGradedCells, DescribeFigures, MathToMathML, CSSHTMLHeaderPreprocessor]
    c.GenerateFeedback.exporter_class = CleanHTMLExporter      # the whole page cleaned after rendering (nh3)
    c.HTMLExporter.extra_template_basedirs = [   # ours first: its feedback/, formgrade/ win; then nbgrader's
        TEMPLATES, os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader", "templates")]
    # The formgrader's page of a submission works offline too: its maths as MathML, no MathJax from a
    # CDN, long messages and code lines wrapped (course_grader/formgrade.py and templates/formgrade/).
    # generate_feedback runs HTMLExporter's preprocessors too: there this one does nothing.
    # What the student wrote and printed passes the allow-list again on that page (no <style>, nothing from
    # elsewhere), and the page has a Content-Security-Policy (course_grader/html_out.py's FORMGRADE_CSP).
    c.HTMLExporter.preprocessors = [FormgradeSanitize, FormgradeMathToMathML]
