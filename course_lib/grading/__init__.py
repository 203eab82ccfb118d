"""The exercise's parts, cases and visible checks: what a student's notebook imports.

The instructor's sandboxed autograder is a package of its own, ``course_grader`` (``grader/`` in the
repository, ``pip install -e grader``), which imports this one; nothing here imports it.

Verdicts
--------
:func:`course_lib.grading.judging.judge` says ``None`` when a part's outputs on a case are right, else a
:class:`~course_lib.grading.judging.Verdict` (``Verdict.as_dict()`` gives the same fields as plain JSON):

``part``
    the part's name (:data:`.parts.PARTS`, e.g. ``"multi_head_attention"``).
``mistake``
    a stable id of what went wrong: one of :data:`.mistakes.IDS`. The named mistakes of
    :data:`.mistakes.MISTAKES` (``"heads_split_wrong"``, ``"padding_mask_inverted"``,
    ``"attention_unscaled"``, ...) and the other kinds of failure of :data:`.mistakes.FAILURES`
    (``"raised"``, ``"wrong_shape"``, ``"values_differ"``, ``"dropout_misplaced"``,
    ``"input_modified"``, ``"reverse_not_learned"``, ...; ``"timed_out"``, ``"rule_broken"``,
    ``"ready_made_attention"`` and the like are for the sandboxed grader's own failures). Ids are
    never reworded: the class report counts them and never parses a message.
``message``
    rung 1 of the hint ladder, for the student: the case's label, then what looks wrong and where to
    look (never the fix). On a hidden case the label names only the family, and each kind of failure
    has one fixed text (:data:`.judging.HIDDEN_MESSAGES`): nothing in it depends on the outputs.
``section``
    the lecture section that teaches it, e.g. ``"02 §5 Multi-head attention"``
    (:func:`.mistakes.section_of`), or None.
``family``
    the case's family ("pre-LN with padding", ...), the same for its visible and hidden cases.
``hidden``
    whether the case was a hidden one.

:func:`.judging.judge_case` returns only the message (for callers that keep text). In the notebook a
failed check raises :class:`.checks.PartFailed`, whose ``mistake`` and ``section`` are the verdict's.

Hints
-----
``hint("attention")`` (:mod:`.hints`) climbs one rung per call: what to print or compare for the failure
at hand (made from it by :mod:`.probes`: the case's call and shapes, where the outputs differ), the lecture
section, the formula or invariant; the climb per part is recorded in ``.hints.json`` next to the notebook, read back
by :func:`.hints.read_record` (``{part: {"rung", "asked", "mistakes": {id: rung}}}``). No grade reads it.
"""
