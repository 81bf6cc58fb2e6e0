"""Shared by ``policy``, ``gate`` and ``estimate``: read a run, or score a set with the run's judge."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.errors import DataError

if TYPE_CHECKING:
    from judgelab.calibration import LabelledRow, RunMeta, ScoreRecord

__all__ = ["UNCALIBRATED_THRESHOLD", "Input", "load_run", "read_input", "records_for", "score_input"]

#: The threshold of a bare scores file (no metrics.json, so no shipped threshold).
UNCALIBRATED_THRESHOLD = 0.5


def _scores_path(run: str | Path) -> Path:
    path = Path(run)
    return path / "scores.jsonl" if path.is_dir() else path


def load_run(run: str | Path, task: str | None = None) -> tuple[list[ScoreRecord], str, float, RunMeta]:
    """Records of one task from a calibrate folder (or scores.jsonl), its task, shipped threshold and run facts.

    The threshold and the facts (``RunMeta``: model, set...) come from the ``metrics.json`` beside the
    scores, read as a typed file; a malformed one, or one without this task, is a one-line error. A bare
    scores file without metrics.json is thresholded at 0.5, and a line on stderr says so.
    """
    import sys

    from judgelab.calibration import RunMeta, read_metrics, read_scores

    scores = _scores_path(run)
    if not scores.exists():
        raise DataError(f"No scores.jsonl at {run}; pass a calibrate output folder or a scores file.", path=str(scores))
    records = read_scores(scores)
    if task:
        records = [r for r in records if r.task == task]
    tasks = sorted({r.task for r in records})
    if len(tasks) != 1:
        raise DataError(f"{run} holds tasks {tasks}; choose one with --task.", path=str(scores))
    metrics = scores.parent / "metrics.json"
    if not metrics.exists():
        print(f"judgelab: no metrics.json beside {scores}: thresholding at {UNCALIBRATED_THRESHOLD} (pass a calibrate "
              "output folder to use its shipped threshold)", file=sys.stderr)
        return records, tasks[0], UNCALIBRATED_THRESHOLD, RunMeta()
    doc = read_metrics(metrics)
    return records, tasks[0], doc.threshold(tasks[0], where=str(metrics)), doc.meta


def _is_scored(path: Path) -> bool:
    if path.is_dir():
        return (path / "scores.jsonl").exists()
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    return "score" in json.loads(line)
    except (OSError, ValueError):
        return False
    return False


def _traffic_rows(path: Path) -> list[LabelledRow]:
    """Traffic rows of a JSONL file: rows that may lack ``label`` (set to 0, never read) and ``id``.

    A malformed line is a ``DataError`` naming the file, the line and the field,
    as for a labelled set.
    """
    from pydantic import ValidationError

    from judgelab.calibration import LabelledRow
    from judgelab.textfiles import read_text

    text = read_text(path, "traffic file", fix="Check the --unlabelled path.")
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        field = None
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
            obj.setdefault("label", 0)
            obj.setdefault("id", f"traffic-{lineno}")
            out.append(LabelledRow.model_validate(obj))
            continue
        except json.JSONDecodeError as exc:
            message = f"not valid JSON ({exc.msg} at column {exc.colno})"
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err.get("loc", ())) or None
            message = err.get("msg", str(exc))
        except ValueError as exc:
            message = str(exc)
        where = f"{path}:{lineno}" + (f" field {field!r}" if field else "")
        raise DataError(f"Malformed traffic row at {where}: {message}. Fix the row (a traffic row needs 'task' "
                        "and 'response'; 'id' and 'label' are optional).", path=str(path), line=lineno, field=field)
    return out


def _rows(spec: str, *, unlabelled: bool) -> list[LabelledRow]:
    """Rows of a set; traffic rows may lack ``label`` (it is set to 0 and never read)."""
    from judgelab.calibration import resolve_set

    if not unlabelled:
        rows, _, _ = resolve_set(spec)
        return rows
    return _traffic_rows(Path(spec))


@dataclass(frozen=True)
class Input:
    """A set given on the command line, read: its records when it is scored already, else its rows."""

    spec: str
    task: str
    records: list[ScoreRecord] | None = None
    rows: list[LabelledRow] | None = None


def read_input(spec: str, *, task: str, unlabelled: bool = False) -> Input:
    """Read ``spec`` (a scored run, a labelled set or traffic) before anything is scored.

    Raises
    ------
    DataError
        A malformed line (file and line named), or no rows of ``task``.
    """
    from judgelab.calibration import read_scores

    path = Path(spec)
    if path.exists() and _is_scored(path):
        return Input(spec, task, records=[r for r in read_scores(_scores_path(path)) if r.task == task])
    rows = [r for r in _rows(spec, unlabelled=unlabelled) if r.task == task]
    if not rows:
        raise DataError(f"{spec} has no rows of task {task!r}.")
    return Input(spec, task, rows=rows)


def score_input(inp: Input, *, model: str | None, out: Path, threads: int | None = None,
                progress: bool = True, allow_partial: bool = True) -> list[ScoreRecord]:
    """The records of ``inp``: as read when it was scored, else scored with ``model``'s default evaluator.

    With ``allow_partial`` false, records in which rows failed raise ``PartialRunError`` (the analysis's
    ``check_publishable`` decides).
    """
    records = _score_input(inp, model=model, out=out, threads=threads, progress=progress)
    if not allow_partial:
        from judgelab.calibration import check_publishable, run_completeness

        n_rows = len(inp.rows) if inp.rows is not None else len(records)
        check_publishable(run_completeness(records, n_rows), allow_partial=False, command="gate")
    return records


def _score_input(inp: Input, *, model: str | None, out: Path, threads: int | None, progress: bool) -> list[ScoreRecord]:
    if inp.records is not None:
        return inp.records
    from judgelab.calibration import run

    if not model:
        raise DataError("The run does not name its model; pass --model.")
    if inp.rows is None:  # read_input sets records or rows
        raise DataError(f"{inp.spec} holds neither scores nor rows.")
    from judgelab.engine import load_model
    from judgelab.errors import JudgelabError
    from judgelab.evaluators import build_evaluator, default_evaluator_name

    try:
        default_evaluator_name(inp.task)
    except JudgelabError:
        raise DataError(f"Cannot score task {inp.task!r} here; score the set with calibrate first and pass its run.") from None
    judge = load_model(model, n_threads=threads) if threads else load_model(model)
    try:
        return run(build_evaluator(None, judge, task=inp.task), inp.rows, out=out / "scores.jsonl", progress=progress)
    finally:
        judge.close()


def records_for(spec: str, *, task: str, model: str | None, out: Path, unlabelled: bool = False,
                threads: int | None = None, progress: bool = True, allow_partial: bool = True) -> list[ScoreRecord]:
    """Records for ``spec``: read when it is already scored, else scored with ``model``'s default evaluator."""
    inp = read_input(spec, task=task, unlabelled=unlabelled)
    return score_input(inp, model=model, out=out, threads=threads, progress=progress, allow_partial=allow_partial)
