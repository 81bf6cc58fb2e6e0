"""Held-out scores during tuning: the judge's own evaluators on rows it never trained on."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from judgelab.calibration import LabelledRow, binary_metrics
from judgelab.engine import JudgeModel
from judgelab.errors import PartialRunError
from judgelab.evaluators import EvaluationResponse, Evaluator, build_evaluator, evaluate_many

__all__ = ["HeldoutEvaluation", "HeldoutScores", "evaluate_heldout", "pick_heldout"]

log = logging.getLogger(__name__)


class HeldoutScores(TypedDict):
    """``evaluate_heldout``'s answer: ``_metrics`` (n, auroc, balanced_accuracy, best_balanced_accuracy)
    per source and over all sources (empty when no source had rows)."""

    label: str
    sources: dict[str, dict[str, float]]
    overall: dict[str, float]


class HeldoutEvaluation(HeldoutScores):
    """One held-out evaluation of a run (``RunState.evaluations``): the scores, and when they were taken."""

    epoch: int
    step: int


def pick_heldout(held: Mapping[str, Sequence[LabelledRow]], per_source: int) -> dict[str, list[LabelledRow]]:
    """At most ``per_source`` held-out rows of each source, as balanced as the rows allow."""
    out = {}
    for name, rows in held.items():
        pos = [r for r in rows if r.label == 1]
        neg = [r for r in rows if r.label == 0]
        half = per_source // 2
        take_pos = min(len(pos), max(half, per_source - len(neg)))
        take_neg = min(len(neg), per_source - take_pos)
        out[name] = pos[:take_pos] + neg[:take_neg]
    return out


def _metrics(labels: npt.NDArray[np.int_], scores: npt.NDArray[np.float64]) -> dict[str, float]:
    if len(set(labels.tolist())) < 2:
        return {"n": int(len(labels)), "auroc": float("nan"), "balanced_accuracy": float("nan"),
                "best_balanced_accuracy": float("nan")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = binary_metrics(labels, scores, threshold=0.5)
        best = max(binary_metrics(labels, scores, threshold=float(t))["balanced_accuracy"]
                   for t in np.unique(scores))
    return {"n": int(len(labels)), "auroc": float(m["auroc"]), "balanced_accuracy": float(m["balanced_accuracy"]),
            "best_balanced_accuracy": float(best)}


def evaluate_heldout(model: JudgeModel, rows: Mapping[str, Sequence[LabelledRow]], *, evaluator: str | None,
                     label: str) -> HeldoutScores:
    """AUROC and balanced accuracy (at 0.5, and at the best threshold) per source and overall.

    ``rows`` maps a source name to its rows; ``evaluator`` is the tuned
    evaluator's name (``None``: each task's default). A row that cannot be
    scored raises ``PartialRunError`` (the CLI exits 3, as calibrate does):
    held-out figures are published only when every row has a score.
    """
    built: dict[str, Evaluator] = {}
    per_source: dict[str, dict[str, float]] = {}
    all_y, all_s = [], []
    for name, source_rows in rows.items():
        if not source_rows:
            continue
        scores: dict[str, float] = {}
        for task in sorted({r.task for r in source_rows}):
            if task not in built:
                named = evaluator if evaluator and task == "fact-check" else None
                built[task] = build_evaluator(named, model, task=task)
            task_rows = [r for r in source_rows if r.task == task]
            responses = _score(built[task], task_rows, source=name, label=label)
            scores.update({r.id: float(resp.score) for r, resp in zip(task_rows, responses)})
        labels_arr = np.array([r.label for r in source_rows], dtype=int)
        scores_arr = np.array([scores[r.id] for r in source_rows], dtype=float)
        per_source[name] = _metrics(labels_arr, scores_arr)
        all_y.append(labels_arr)
        all_s.append(scores_arr)
        log.info("%s held-out %s: %s", label, name, per_source[name])
    overall = _metrics(np.concatenate(all_y), np.concatenate(all_s)) if all_y else {}
    return {"label": label, "sources": per_source, "overall": overall}


def _score(evaluator: Evaluator, rows: Sequence[LabelledRow], *, source: str, label: str) -> list[EvaluationResponse]:
    """The evaluator's responses to ``rows``, or a ``PartialRunError`` naming the source and the first failure."""
    try:
        responses = evaluate_many(evaluator, [r.to_request() for r in rows])
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as exc:
        raise PartialRunError(
            f"{label} held-out scoring of {source!r} failed on its {len(rows)} rows ({rows[0].task}): "
            f"{type(exc).__name__}: {exc}. No held-out figures are published from a partial evaluation; fix the "
            "cause and rerun the same command, which resumes from the last checkpoint.",
            n_failed=len(rows), n_rows=len(rows), first_error=f"{type(exc).__name__}: {exc}",
        ) from exc
    return responses
