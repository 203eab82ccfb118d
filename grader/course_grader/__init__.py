"""The instructor's sandboxed autograder (``python -m course_grader autograde``): what runs a class's
submissions, never imported by a student's notebook. The modules a notebook imports (the cases, the
checks, the judging of a part's outputs, its usual mistakes) are in :mod:`course_lib.grading`, in the
student's package, which this one imports (never the other way round)."""
