"""The exercise's parts, cases and visible checks: what a student's notebook imports.

The instructor's sandboxed autograder is a package of its own, ``course_grader`` (``grader/`` in the
repository, ``pip install -e grader``), which imports this one; nothing here imports it.
"""
