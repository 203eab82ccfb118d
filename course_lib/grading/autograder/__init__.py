"""The instructor's sandboxed autograder (``python -m course_lib.grading autograde``): what runs a class's
submissions, never imported by a student's notebook. The modules a notebook imports (the cases, the
checks, the judging of a part's outputs, its usual mistakes) are in :mod:`course_lib.grading`."""
