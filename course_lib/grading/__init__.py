"""The exercise's autograder: nbgrader's workflow, with every part of a submission run in a sandbox.

Command line (from the course root, where nbgrader_config.py is)::

    python -m course_lib.grading autograde 07_exercise [--student ID] [--jobs 2] [--force]

See :mod:`course_lib.grading.autograder.autograde` for how it works and :mod:`course_lib.grading.autograder.sandbox` for
what the sandbox does.
"""
