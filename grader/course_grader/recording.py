"""Recording a class's verdicts with nbgrader's own ``Autograde`` converter (the sandboxed autograder's
second phase, :mod:`.autograde`): each test cell gets its part's verdict as its output instead of being
executed, and nbgrader's ``SaveAutoGrades`` writes the scores to the gradebook; plus what makes that
cheap (one SQLAlchemy engine per process, the metadata schema checked once, no deep copies)."""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import traceback
import warnings

import jsonschema
import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader import api as nbgrader_api
from nbgrader import utils
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from . import html_out, runner
from .feedback import display_data_priority

RESULTS: dict = {}           # (student, notebook) -> {part: {"passed": bool, "message": str}}
HAND_GRADED: set = set()     # (notebook, grade_id) graded by hand already, for this same submission


class ClearGradedOutputs(ClearOutput):
    """nbgrader's ClearOutput on the graded cells only (test cells, autograded answers): their outputs
    come from the grader alone (:class:`InjectSandboxResults`). The student's other cells keep what
    they printed and drew (9.x's numbers, the Reverser's attention map), for the formgrader and the
    feedback, where the rubric asks for them; :class:`SanitizeStudentCells` makes them inert."""

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and utils.is_grade(cell):
            return super().preprocess_cell(cell, resources, cell_index)
        return cell, resources


class SanitizeStudentCells(NbGraderPreprocessor):
    """What the student wrote holds no active HTML in the autograded notebook that the formgrader and
    the feedback page show: markdown and raw cells (all but the locked ones, which nbgrader restored
    from the gradebook) rendered and then cleaned (:func:`.html_out.inert_markdown`, never the markdown
    source); every code cell's outputs through nbconvert's SanitizeHTML with :mod:`.html_out`'s
    allow-list (JavaScript, SVG and widgets dropped; a markdown output rendered, then cleaned, as
    HTML; PNG, JPEG, plain text and LaTeX kept). The feedback page is cleaned again as a whole."""

    display_data_priority = display_data_priority()          # generate_feedback sets it: no warning
    ids = True                   # False: no id or name in what the student wrote (the formgrader's page)

    def preprocess(self, nb, resources):
        from nbconvert.preprocessors.sanitize import SanitizeHTML
        ids = self.ids

        class Inert(SanitizeHTML):
            def sanitize_html_tags(self, html_str):
                return html_out.student_fragment(html_str, ids)
        self._outputs = Inert()
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type in ("markdown", "raw") and not (meta.get("locked") and meta.get("grade_id")):
            cell.source = html_out.inert_markdown(cell.source if isinstance(cell.source, str) else "", self.ids)
            cell.pop("attachments", None)
        elif cell.cell_type == "code":
            for output in cell.get("outputs", []):
                data = output.get("data") if isinstance(output, dict) else None
                if isinstance(data, dict) and "text/markdown" in data:
                    markdown = data.pop("text/markdown")
                    data["text/html"] = html_out.inert_markdown("".join(markdown) if isinstance(markdown, list)
                                                                else str(markdown), self.ids)
            cell.outputs = self._outputs.sanitize_code_outputs(cell.get("outputs", []))
        return cell, resources


class SaveAutoGradesKeepingHandGrading(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, except that a grade given by hand to this same submission (its
    timestamp unchanged) stays given: nbgrader would set ``needs_manual_grade`` on every answer with a
    manual score, so ``autograde --force`` after a due-date change sent the formgrader's hand grading
    back to the queue. A new submission's hand grades are still marked for review, as nbgrader does."""

    def _add_score(self, cell, resources) -> None:
        super()._add_score(cell, resources)
        if (self.notebook_id, cell.metadata["nbgrader"]["grade_id"]) in HAND_GRADED:
            grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                              self.assignment_id, self.student_id)
            if grade.manual_score is not None:
                grade.needs_manual_grade = False
                self.gradebook.db.commit()


def _naive_utc(stamp):
    if stamp is None:
        return None
    if isinstance(stamp, str):
        stamp = utils.parse_utc(stamp)
    if stamp.tzinfo is not None:
        import datetime
        stamp = stamp.astimezone(datetime.UTC).replace(tzinfo=None)
    return stamp


def _answer_hashes(path: str, root: str, as_recorded: bool) -> dict:
    """{grade_id: sha256 of the cell's source as the autograded notebook records it} for the notebook at
    ``path`` (read by descriptor, with limits; {} if it cannot be read). ``as_recorded``: the source is
    the student's as submitted, so a markdown cell is made inert first, as the recording makes it."""
    import hashlib

    from . import files_in, json_in, notebook_in
    try:
        nb = json_in.loads(files_in.read_file(path, root, runner.MAX_NOTEBOOK_BYTES), runner.MAX_NOTEBOOK_BYTES)
    except (OSError, ValueError):
        return {}
    out = {}
    for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        gid, source = meta.get("grade_id") if isinstance(meta, dict) else None, cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        graded = isinstance(meta, dict) and any(meta.get(f) for f in notebook_in.FLAGS)
        if isinstance(gid, str) and graded and gid not in out:      # nbgrader's cells only, the first one
            if as_recorded and cell.get("cell_type") in ("markdown", "raw"):
                source = html_out.inert_markdown(source)
            out[gid] = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
    return out


def hand_graded(coursedir, assignment_id: str, student: str) -> set:
    """{(notebook, grade_id)} graded by hand for the submission now in ``submitted/``: the gradebook's
    timestamp of the student's submission is that of its ``timestamp.txt``, and the answer's content is
    the one graded (a hash of the cell, submitted against the autograded notebook the hand grade was
    given on). An answer changed under an unchanged timestamp, or a new submission, is not in the set:
    its hand grade stays but is flagged for review, as nbgrader flags it."""
    from nbgrader.api import Gradebook, MissingEntry
    folder = coursedir.format_path(coursedir.submitted_directory, student, assignment_id)
    graded = coursedir.format_path(coursedir.autograded_directory, student, assignment_id)
    try:
        now = _naive_utc(coursedir.get_existing_timestamp(folder))
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            submission = gb.find_submission(assignment_id, student)
            if _naive_utc(submission.timestamp) != now:
                return set()
            kept = {(nb.name, g.name) for nb in submission.notebooks for g in nb.grades
                    if g.manual_score is not None and not g.needs_manual_grade}
    except (MissingEntry, ValueError, TypeError):
        return set()
    same = set()
    for name in {nb for nb, _ in kept}:
        before = _answer_hashes(os.path.join(graded, name + ".ipynb"), coursedir.root, as_recorded=False)
        after = _answer_hashes(os.path.join(folder, name + ".ipynb"), coursedir.root, as_recorded=True)
        same |= {(name, gid) for gid, digest in after.items() if before.get(gid) == digest}
    return kept & same


class InjectSandboxResults(NbGraderPreprocessor):
    """Instead of executing: each test cell's output is the verdict of its part (pass / error)."""

    def preprocess(self, nb, resources):
        key = (resources["nbgrader"]["student"], resources["nbgrader"]["notebook"])
        self._results = RESULTS.get(key)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
            return cell, resources
        part = runner.part_of_test(cell.metadata.nbgrader.get("grade_id", ""))
        result = None if (self._results is None or part is None) else self._results.get(part)
        if result is None:
            message = "this test cell was not graded by the sandboxed grader"
            cell.outputs = [_error(message)]
        elif result["status"] == "passed":
            cell.outputs = [new_output("stream", name="stdout",
                                       text=f"Graded in a sandbox: {result['message']}\n")]
        else:
            cell.outputs = [_error(result["message"])]
        if result is not None:               # the verdict as data, for the class report (course_grader.report)
            cell.metadata["course_grader"] = {"verdict": {k: v for k, v in result.items() if k != "passed"}}
        return cell, resources


class MatchReleasedCells(NbGraderPreprocessor):
    """The student's nbgrader metadata checked against the released notebook (the gradebook's source
    cells) before nbgrader's own preprocessors read it: a cell whose grade_id the assignment does not
    have (an extra grade cell, ``test_bonus``) is no longer an nbgrader cell (it stays, ungraded, and the
    log says so: nbgrader's OverwriteCells stopped the run on it); a known cell gets the released cell's
    type and points (``points: 1000`` changes nothing), each difference said in the log with the
    student's id (nbgrader's own OverwriteCells would no longer see it, and its lines name no student).
    The run goes on."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook
        with Gradebook(resources["nbgrader"]["db_url"]) as gb:
            source = gb.find_notebook(resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"])
            released = {c.name: c for c in source.source_cells}
            points = {c.name: c.max_score for c in [*source.grade_cells, *source.task_cells]}
            types = {c.name: c.cell_type for c in source.source_cells}
        student = ascii(str(resources["nbgrader"].get("student", "")))
        for i, cell in enumerate(nb.cells):
            meta = cell.metadata.get("nbgrader")
            if not isinstance(meta, dict) or not (meta.get("grade") or meta.get("solution") or meta.get("locked")
                                                  or meta.get("task")):
                continue
            gid = meta.get("grade_id")
            if gid not in released:
                self.log.warning("%s: cell %d's grade_id %s is not one of the assignment's: graded as a plain cell",
                                 student, i, ascii(str(gid))[:60])
                del cell.metadata["nbgrader"]
                continue
            if cell.cell_type != types[gid]:
                self.log.warning("%s: cell %d (%s) was a %s cell: graded as the release's %s cell", student, i,
                                 ascii(gid)[:60], ascii(cell.cell_type)[:20], types[gid])
            cell.cell_type = types[gid]
            if gid in points and meta.get("points") != points[gid]:
                self.log.warning("%s: cell %d (%s) claimed %s points: graded on the release's %g", student, i,
                                 ascii(gid)[:60], ascii(meta.get("points"))[:20], points[gid])
            if gid in points:
                meta["points"] = points[gid]
            elif "points" in meta:
                del meta["points"]
        return nb, resources


class CheckCellMetadataOnce(CheckCellMetadata):
    """nbgrader's CheckCellMetadata, with the JSON schema checked once per process rather than once per
    cell (``jsonschema.validate`` checks the schema itself every call: half of a student's recording)."""

    def preprocess(self, nb, resources):
        try:
            _METADATA.validate_nb(nb)
        except ValidationError as e:
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg) from e
        return nb, resources


class _SourceCells:
    """The gradebook, for nbgrader's OverwriteCells on one notebook: it looks up every cell's source cell
    and graded cell, one query each (about 40 a student, ~40 ms); here they come from the notebook's
    rows, read in a few queries while nbgrader's gradebook is open, and a name they do not hold goes to
    the gradebook's own lookup (and its MissingEntry). OverwriteCells commits nothing in between, so the
    rows stay loaded. Everything else is the gradebook itself."""

    def __init__(self, gradebook, notebook: str, assignment: str) -> None:
        self._gradebook = gradebook
        source = gradebook.find_notebook(notebook, assignment)
        self._source = {c.name: c for c in source.source_cells}
        self._graded = {c.name: c for c in source.task_cells} | {c.name: c for c in source.grade_cells}

    def find_source_cell(self, name, *where):
        return self._source.get(name) or self._gradebook.find_source_cell(name, *where)

    def find_graded_cell(self, name, *where):
        return self._graded.get(name) or self._gradebook.find_graded_cell(name, *where)

    def __getattr__(self, attr):
        return getattr(self._gradebook, attr)


class OverwriteTestCells(OverwriteCells):
    """nbgrader's OverwriteCells without its "Attribute 'checksum' for cell test_... has changed" warning:
    a test cell with hidden tests always differs from its released copy (nbgrader's known false alarm,
    eight lines a student), and every locked cell is restored from the gradebook all the same. Other
    changes (a locked cell that is not a test, points, cell types) are still reported."""

    def report_change(self, name, attr, old, new) -> None:
        if attr == "checksum" and runner.part_of_test(name or "") is not None:
            return
        super().report_change(name, attr, old, new)

    def preprocess_cell(self, cell, resources, index):
        if not isinstance(self.gradebook, _SourceCells):          # the first cell: nbgrader's gradebook is open
            self.gradebook = _SourceCells(self.gradebook, self.notebook_id, self.assignment_id)
        return super().preprocess_cell(cell, resources, index)


class _MetadataValidator(MetadataValidator):
    def __init__(self) -> None:
        super().__init__()
        cls = jsonschema.validators.validator_for(self.schema)
        cls.check_schema(self.schema)
        self._validator = cls(self.schema)

    def validate_cell(self, cell) -> None:
        """nbgrader's checks, then what ``jsonschema.validate`` raises, from the validator made once."""
        if "nbgrader" not in cell.metadata:
            return
        version = cell.metadata["nbgrader"].get("schema_version", 0)
        if version != self.schema_version:
            super().validate_cell(cell)                      # nbgrader's own error for an old or new schema
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error


_METADATA = _MetadataValidator()

#: what a grade_id may be: nbgrader prints it in its log lines, so nothing a terminal would act upon
PLAIN_GRADE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def _semantics(cell_type, meta: dict) -> None:
    """nbgrader's MetadataValidatorV3 checks beyond the schema (without its per-cell schema check)."""
    grade, solution, locked, task = meta["grade"], meta["solution"], meta["locked"], meta.get("task", False)
    if (grade or solution or locked) and not meta.get("grade_id"):
        raise ValidationError("no grade_id")
    if grade and "points" not in meta:
        raise ValidationError("no points")
    if task and cell_type != "markdown":
        raise ValidationError("task cell not markdown")
    if not task and cell_type == "markdown" and bool(grade) != bool(solution):
        raise ValidationError("markdown grade cell not a solution cell, or the other way round")


def _check_cell(cell_type, meta, source) -> str | None:
    """The name of the error nbgrader's validator raises for a cell's nbgrader metadata, or None."""
    try:
        _METADATA.validate_cell(NotebookNode(cell_type=cell_type, source=source,
                                             metadata=NotebookNode(nbgrader=copy.deepcopy(meta))))
        _semantics(cell_type, meta)
    except Exception as e:                                   # noqa: BLE001 (any of nbgrader's refusals)
        return type(e).__name__
    return None


@functools.lru_cache(maxsize=1024)
def _check_current(key: str) -> str | None:
    cell_type, meta = json.loads(key)
    return _check_cell(cell_type, nbformat.from_dict(meta), "")


def _refusal(cell_type, meta, source) -> str | None:
    """:func:`_check_cell`, computed once per distinct (cell type, metadata) of the current schema: the
    outcome depends on nothing else (the source appears only in the messages of an old or new schema's
    errors, and those are checked every time), and a class repeats the same forty cells' metadata in
    every notebook (jsonschema took ~4 ms a notebook). The key is the metadata's JSON, which tells apart
    everything a notebook's JSON can hold (true from 1, 1 from 1.0)."""
    if isinstance(meta, dict) and meta.get("schema_version", 0) == _METADATA.schema_version:
        try:
            key = json.dumps([cell_type, meta], sort_keys=True, allow_nan=True)
        except (TypeError, ValueError):
            key = None
        if key is not None and len(key) <= 4096:
            return _check_current(key)
    return _check_cell(cell_type, meta, source)


def invalid_metadata(nb, folder: str | None = None) -> str | None:
    """Why nbgrader could not record ``nb`` (the submission in ``folder``), checked before it sees it,
    or None: a grade_id that is not a plain name (escape sequences would reach the instructor's terminal
    and grader.log through nbgrader's own log lines), metadata nbgrader's validator rejects (an empty
    ``"nbgrader": {}``, ``points: "lots"``, ...), a test cell that is not a grade cell, a grade_id used
    twice, a ``timestamp.txt`` nbgrader cannot parse. The reason never quotes the submission's text."""
    seen: set = set()
    for i, cell in enumerate(nb.get("cells", [])):
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta is None:
            continue
        gid = meta.get("grade_id")
        if gid is not None and not (isinstance(gid, str) and PLAIN_GRADE_ID.fullmatch(gid)):
            return (f"cell {i}'s grade_id is not a plain name (letters, digits, '_.-'), e.g. "
                    f"{ascii(str(gid))[:60]}")
        refused = _refusal(cell.get("cell_type"), meta, cell.get("source", ""))
        if refused:
            return f"cell {i}'s nbgrader metadata is not valid ({refused})"
        if gid is not None and (meta.get("grade") or meta.get("solution") or meta.get("locked")):
            if gid in seen:
                return f"the grade_id {gid} is used by two cells"
            seen.add(gid)
        if gid is not None and runner.part_of_test(gid) is not None and not meta.get("grade"):
            return f"the test cell {gid} is not a grade cell (its nbgrader metadata was changed)"
    stamp = None if folder is None else os.path.join(folder, "timestamp.txt")
    if stamp is not None and os.path.lexists(stamp):
        try:
            if os.path.islink(stamp) or os.path.getsize(stamp) > 1000:
                raise ValueError("not a small file")
            with open(stamp, encoding="utf-8") as f:
                utils.parse_utc(f.read().strip())
        except Exception:                                    # noqa: BLE001
            return "its timestamp.txt is not a time nbgrader can read"
    return None


class _Owned(NotebookNode):
    """A notebook just read from its file, which nothing else holds: its "deep copy" is itself."""

    def __deepcopy__(self, memo):
        return _Owned(self)


class OwnCopyExporter(NotebookExporter):
    """nbconvert's NotebookExporter, without the two deep copies it makes of the notebook before the
    preprocessors run (~15 ms a student): nbgrader's converter hands it a notebook it has just read from
    its file, which nothing else holds or reads again."""

    def from_file(self, file_stream, resources=None, **kw):
        nb = _Owned(nbformat.read(file_stream, as_version=4))
        return self.from_notebook_node(nb, resources=resources, **kw)


def _engine_per_process(create_engine):
    """nbgrader's Gradebook makes a new SQLAlchemy engine each time it is opened (nine times for one
    student), so no compiled statement is ever reused. One engine per database URL keeps SQLAlchemy's
    statement cache; sessions stay nbgrader's. The workers inherit the grader's engine, with the
    statements the grader compiled, and each gives it a pool of its own on first use (SQLAlchemy's
    ``dispose(close=False)`` after a fork: the grader's connections are never touched)."""
    engines: dict = {}

    def shared(url, **kwargs):
        key = (str(url), tuple(sorted(kwargs.items())))
        if key not in engines:
            engines[key] = [create_engine(url, **kwargs), os.getpid()]
        engine, pid = engines[key]
        if pid != os.getpid():
            engine.dispose(close=False)
            engines[key][1] = os.getpid()
        return engine
    shared.shares = True
    return shared


def _once_per_engine(create_all):
    """nbgrader's Gradebook checks for (and creates) every table each time it is opened: 13 queries,
    nine times for one student. With one engine per process (above), once per engine is enough."""
    done: set = set()

    def once(bind=None, **kwargs):
        if bind is None or id(bind) not in done:
            create_all(bind=bind, **kwargs)
            if bind is not None:
                done.add(id(bind))
    return once


def configure_recording(config) -> None:
    """nbgrader's Autograde as the sandboxed grader runs it: InjectSandboxResults where nbgrader has
    Execute, CheckCellMetadataOnce for CheckCellMetadata in the sanitizing pass, and no second check
    after it (the preprocessors in between do not change nbgrader's metadata). nbconvert checks the
    notebook against nbformat's schema at the end of each pass rather than after each of its eleven
    preprocessors (``optimistic_validation``): an invalid notebook still stops the recording; and it
    works on the notebook it read rather than on a deep copy (:class:`OwnCopyExporter`)."""
    config.Autograde.sanitize_preprocessors = [MatchReleasedCells, ClearGradedOutputs, DeduplicateIds,
                                               OverwriteKernelspec, OverwriteTestCells, CheckCellMetadataOnce]
    config.Autograde.autograde_preprocessors = [
        SanitizeStudentCells, InjectSandboxResults, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
        SaveAutoGradesKeepingHandGrading, AssignLatePenalties]
    config.OverwriteCells.add_missing_cells = True
    config.NotebookExporter.optimistic_validation = True        # nbformat's schema once per pass, not per step
    config.Autograde.exporter_class = OwnCopyExporter
    if not getattr(nbgrader_api.create_engine, "shares", False):
        nbgrader_api.create_engine = _engine_per_process(nbgrader_api.create_engine)
        nbgrader_api.Base.metadata.create_all = _once_per_engine(nbgrader_api.Base.metadata.create_all)
    # nbgrader's own ORM use (api.py, Gradebook.add_submission) makes SQLAlchemy 2 warn about an
    # autoflush, once per worker; plain ``nbgrader autograde`` prints the same lines. Not ours to fix.
    warnings.filterwarnings("ignore", message=r"Object of type <Submitted\w+> not in session", module="nbgrader")


def _error(message: str):
    return new_output("error", ename="AssertionError", evalue=message,
                      traceback=[f"\x1b[0;31mAssertionError\x1b[0m: {message}"])
