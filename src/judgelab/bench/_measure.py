"""One cell's figures: a threshold tuned on the set's dev split, everything else on its test split."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgelab.bench._records import CellMetrics, CellStatus
from judgelab.bench._sets import BenchSet
from judgelab.calibration.analysis import bootstrap_many, choose_threshold, fast_binary_metrics, interval_warning, shared_units
from judgelab.calibration.data import IntervalRecord, ScoreRecord

__all__ = ["CellScores", "cell_scores", "measure_cell"]

#: The threshold of a judge whose dev rows cannot tune one (one class, or none scored).
UNTUNED_THRESHOLD = 0.5


@dataclass(frozen=True)
class CellScores:
    """One judge's scores of one task of a set, by row id (rows without a score left out), and its threshold."""

    judge: str
    bench_set: BenchSet
    task: str
    status: CellStatus
    scores: dict[str, float]
    records: dict[str, ScoreRecord]
    threshold: float
    threshold_note: str | None

    @property
    def n_rows(self) -> int:
        return len(self.bench_set.by_task[self.task])

    @property
    def n_missing(self) -> int:
        return self.n_rows - len(self.scores)

    @property
    def column(self) -> str:
        return self.bench_set.key(self.task)

    def ids(self, side: str) -> list[str]:
        split = self.bench_set.split[self.task]
        return [r.id for r in self.bench_set.by_task[self.task] if split[r.id] == side and r.id in self.scores]


def _tuned(ids: Sequence[str], rows_label: Mapping[str, int], scores: Mapping[str, float]) -> tuple[float, str | None]:
    y = np.array([rows_label[i] for i in ids], dtype=int)
    if len(set(y.tolist())) < 2:
        return UNTUNED_THRESHOLD, (f"the dev split has {'no scored rows' if not len(y) else 'one class only'}: "
                                   f"threshold {UNTUNED_THRESHOLD} used, not tuned")
    s = np.array([scores[i] for i in ids], dtype=float)
    return float(choose_threshold(y, s, "balanced_accuracy")), None


def cell_scores(judge: str, bench_set: BenchSet, task: str, status: CellStatus,
                records: Sequence[ScoreRecord]) -> CellScores:
    """A cell's scores read from its records, with the threshold tuned on its dev rows."""
    wanted = {r.id for r in bench_set.by_task[task]}
    latest = {r.id: r for r in records if r.task == task and r.id in wanted}
    scores = {i: float(r.score) for i, r in latest.items() if r.ok and r.score is not None}
    labels = {r.id: int(r.label) for r in bench_set.by_task[task]}
    split = bench_set.split[task]
    dev = [r.id for r in bench_set.by_task[task] if split[r.id] == "dev" and r.id in scores]
    threshold, note = _tuned(dev, labels, scores)
    return CellScores(judge, bench_set, task, status, scores, latest, threshold, note)


def _arrays(cell: CellScores, ids: Sequence[str]) -> tuple[npt.NDArray[np.int_], npt.NDArray[np.float64]]:
    labels = {r.id: int(r.label) for r in cell.bench_set.by_task[cell.task]}
    return np.array([labels[i] for i in ids], dtype=int), np.array([cell.scores[i] for i in ids], dtype=float)


def _mean(values: Sequence[float | int | None]) -> float | None:
    kept = [float(v) for v in values if v is not None]
    return round(sum(kept) / len(kept), 6) if kept else None


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def measure_cell(cell: CellScores, *, n_resamples: int = 1000, seed: int = 0) -> CellMetrics:
    """The leaderboard's figures of one cell on its test split (intervals: whole units resampled)."""
    test = cell.ids("test")
    y, s = _arrays(cell, test)
    units = [cell.records[i].unit or i for i in test]
    t = cell.threshold

    def stat(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> dict[str, float]:
        m = fast_binary_metrics(y, s, t)
        return {"auroc": m["auroc"], "balanced_accuracy": m["balanced_accuracy"]}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ivs = bootstrap_many(stat, [y, s], n_resamples=n_resamples, seed=seed, units=shared_units(units)) if len(y) else {}
        at_half = fast_binary_metrics(y, s, 0.5) if len(y) else {}
    warning = interval_warning(units, ivs) if len(y) else None
    n_rows = len(cell.bench_set.by_task[cell.task])
    scored = list(cell.records.values())
    return CellMetrics(
        judge=cell.judge, set=cell.bench_set.argument, task=cell.task, column=cell.column, status=cell.status,
        n_rows=n_rows, n_scored=len(cell.scores), coverage=round(len(cell.scores) / n_rows, 6) if n_rows else 0.0,
        n_dev=len(cell.ids("dev")), n_test=len(test), n_test_units=len(set(units)),
        threshold=round(t, 6), threshold_note=cell.threshold_note,
        auroc=IntervalRecord.model_validate(ivs["auroc"], from_attributes=True) if ivs else None,
        balanced_accuracy=IntervalRecord.model_validate(ivs["balanced_accuracy"], from_attributes=True) if ivs else None,
        balanced_accuracy_at_half=_num(at_half.get("balanced_accuracy", math.nan)),
        ece=_num(at_half.get("ece", math.nan)),
        seconds_per_judgment=_mean([r.seconds for r in scored if r.ok]),
        prompt_tokens_per_judgment=_mean([r.prompt_tokens for r in scored if r.ok]),
        warnings=(warning,) if warning else (),
    )
