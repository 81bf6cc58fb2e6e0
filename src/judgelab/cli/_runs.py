"""Shared by ``policy``, ``gate`` and ``estimate``: read a run, or score a set with the run's judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgelab.errors import DataError

__all__ = ["UNCALIBRATED_THRESHOLD", "load_run", "records_for"]

#: The threshold of a bare scores file (no metrics.json, so no shipped threshold).
UNCALIBRATED_THRESHOLD = 0.5


def _scores_path(run: str | Path) -> Path:
    path = Path(run)
    return path / "scores.jsonl" if path.is_dir() else path


def load_run(run: str | Path, task: str | None = None) -> tuple[list[Any], str, float, Any]:
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


def _rows(spec: str, *, unlabelled: bool):
    """Rows of a set; traffic rows may lack ``label`` (it is set to 0 and never read)."""
    from judgelab.calibration import LabelledRow, resolve_set

    if not unlabelled:
        rows, _, _ = resolve_set(spec)
        return rows
    out = []
    for lineno, line in enumerate(Path(spec).read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            obj = json.loads(line)
            obj.setdefault("label", 0)
            obj.setdefault("id", f"traffic-{lineno}")
            out.append(LabelledRow.model_validate(obj))
    return out


def records_for(spec: str, *, task: str, model: str | None, out: Path, unlabelled: bool = False,
                threads: int | None = None, progress: bool = True) -> list[Any]:
    """Records for ``spec``: read when it is already scored, else scored with ``model``'s default evaluator."""
    from judgelab.calibration import read_scores, run

    path = Path(spec)
    if path.exists() and _is_scored(path):
        return [r for r in read_scores(_scores_path(path)) if r.task == task]
    rows = [r for r in _rows(spec, unlabelled=unlabelled) if r.task == task]
    if not rows:
        raise DataError(f"{spec} has no rows of task {task!r}.")
    if not model:
        raise DataError("The run does not name its model; pass --model.")
    from judgelab.engine import load_model
    from judgelab.evaluators import build_evaluator, default_evaluator_name
    from judgelab.errors import JudgelabError

    try:
        default_evaluator_name(task)
    except JudgelabError:
        raise DataError(f"Cannot score task {task!r} here; score the set with calibrate first and pass its run.") from None
    options = {"n_threads": threads} if threads else {}
    judge = load_model(model, **options)
    try:
        return run(build_evaluator(None, judge, task=task), rows, out=out / "scores.jsonl", progress=progress)
    finally:
        judge.close()
