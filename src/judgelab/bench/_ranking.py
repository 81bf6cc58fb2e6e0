"""Ranking judges: paired differences from the best judge, with the same unit resamples for every judge.

In one column (a set and task) every ranked judge scored the same test rows; each bootstrap resample
draws whole units (``LabelledRow.unit``) with replacement, once, and every judge's figure is computed
on that same draw, so a difference from the best judge is paired. The mean over sets uses, per
resample, the same draw of every column: each judge's mean over columns minus the best judge's.
A judge is "tied with the best" when its difference's interval holds 0.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from judgelab.bench._measure import CellScores
from judgelab.bench._records import MEAN_COLUMN, BaselineComparison, BaselineEntry, Kappa, McNemar, RankEntry, Ranking
from judgelab.calibration.analysis import cohen_kappa_score, fast_binary_metrics, mcnemar_test
from judgelab.calibration.data import IntervalRecord

__all__ = ["ColumnDraws", "agreement_between", "mean_draws", "rank_column", "rank_mean", "versus_baseline"]

Draws = dict[str, npt.NDArray[np.float64]]


class ColumnDraws:
    """A ranked column's point figures and bootstrap draws per judge (``draws[judge][r]``: resample ``r``)."""

    def __init__(self, column: str, points: dict[str, float], draws: Draws, n_test: int, n_units: int) -> None:
        self.column, self.points, self.draws, self.n_test, self.n_units = column, points, draws, n_test, n_units


def _unit_draws(units: Sequence[str], n_resamples: int, rng: np.random.Generator) -> list[npt.NDArray[np.intp]]:
    _, inverse = np.unique(np.asarray(units), return_inverse=True)
    members = [np.flatnonzero(inverse == u) for u in range(int(inverse.max()) + 1)] if len(units) else []
    picks = rng.integers(0, len(members), size=(n_resamples, len(members))) if members else np.zeros((0, 0), int)
    return [np.concatenate([members[u] for u in row]) for row in picks]


def _interval(d: npt.NDArray[np.float64], point: float, confidence: float = 0.95) -> IntervalRecord:
    kept = d[~np.isnan(d)]
    if math.isnan(point) or len(kept) < len(d) / 2 or not len(kept):
        return IntervalRecord(estimate=point, low=math.nan, high=math.nan)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(kept, [alpha, 1 - alpha])
    return IntervalRecord(estimate=point, low=float(lo), high=float(hi))


def _best(points: dict[str, float]) -> str:
    """The judge with the highest figure (the first in bench order on a tie; nan never best)."""
    valid = [(v, -i, j) for i, (j, v) in enumerate(points.items()) if not math.isnan(v)]
    return max(valid)[2] if valid else next(iter(points))


def _tied(iv: IntervalRecord) -> bool:
    return iv.low is not None and iv.high is not None and iv.low <= 0 <= iv.high


def _entries(points: dict[str, float], draws: Draws,
             mcnemar_of: Callable[[str, str], McNemar | None] | None = None) -> tuple[RankEntry, ...]:
    """Every judge's figure and paired difference from the best, best first, then by figure."""
    best = _best(points)
    entries = []
    for j, point in points.items():
        diff = _interval(draws[j] - draws[best], point - points[best])
        entries.append(RankEntry(judge=j, value=None if math.isnan(point) else point, difference=diff,
                                 best=j == best, tied_with_best=j != best and _tied(diff),
                                 mcnemar=mcnemar_of(best, j) if mcnemar_of is not None and j != best else None))
    entries.sort(key=lambda e: (not e.best, -(e.value if e.value is not None else -math.inf)))
    return tuple(entries)


def _correct(cell: CellScores, ids: Sequence[str], y: npt.NDArray[np.int_]) -> npt.NDArray[np.bool_]:
    s = np.array([cell.scores[i] for i in ids], dtype=float)
    return np.asarray((s >= cell.threshold) == (y == 1))


def rank_column(cells: Sequence[CellScores], metric: str, *, n_resamples: int = 1000,
                seed: int = 0, index: int = 0) -> tuple[Ranking, ColumnDraws]:
    """Rank the complete cells of one column by ``metric`` on their shared test rows."""
    ranked = [c for c in cells if c.status == "complete"]
    not_ranked = {c.judge: f"cell {c.status}: {c.n_missing} of {c.n_rows} rows have no score" for c in cells
                  if c.status != "complete"}
    column = cells[0].column
    if not ranked:
        return (Ranking(column=column, metric=metric, n_test=0, n_units=0, entries=(), not_ranked=not_ranked),
                ColumnDraws(column, {}, {}, 0, 0))
    bench_set, task = ranked[0].bench_set, ranked[0].task
    ids = [i for i in ranked[0].ids("test") if all(i in c.scores for c in ranked)]
    rows = {r.id: r for r in bench_set.by_task[task]}
    y = np.array([rows[i].label for i in ids], dtype=int)
    units = [rows[i].unit for i in ids]
    scores = {c.judge: np.array([c.scores[i] for i in ids], dtype=float) for c in ranked}
    draws_idx = _unit_draws(units, n_resamples, np.random.default_rng([seed, index]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        points = {c.judge: float(fast_binary_metrics(y, scores[c.judge], c.threshold)[metric]) for c in ranked}
        draws = {c.judge: np.array([fast_binary_metrics(y[ix], scores[c.judge][ix], c.threshold)[metric]
                                    for ix in draws_idx], dtype=float) for c in ranked}
    correct = {c.judge: _correct(c, ids, y) for c in ranked}

    def mcnemar_of(best: str, judge: str) -> McNemar:
        b, cc, p = mcnemar_test(correct[best], correct[judge])
        return McNemar(only_best_correct=b, only_judge_correct=cc, p_value=p)

    entries = _entries(points, draws, mcnemar_of)
    ranking = Ranking(column=column, metric=metric, n_test=len(ids), n_units=len(set(units)), entries=entries,
                      not_ranked=not_ranked)
    return ranking, ColumnDraws(column, points, draws, len(ids), len(set(units)))


def mean_draws(columns: Sequence[ColumnDraws], judges: Sequence[str], missing: dict[str, str]) -> ColumnDraws:
    """The mean over columns of each judge ranked in every column, paired by resample index across columns."""
    everywhere = [j for j in judges if columns and all(j in c.points for c in columns) and j not in missing]
    points = {j: float(np.mean([c.points[j] for c in columns])) for j in everywhere}
    draws = {j: np.mean(np.vstack([c.draws[j] for c in columns]), axis=0) for j in everywhere}
    return ColumnDraws(MEAN_COLUMN, points, draws, sum(c.n_test for c in columns), sum(c.n_units for c in columns))


def rank_mean(columns: Sequence[ColumnDraws], judges: Sequence[str], metric: str,
              missing: dict[str, str]) -> Ranking:
    """The ranking of the mean over columns (``mean_draws``); judges missing a column are not ranked."""
    mean = mean_draws(columns, judges, missing)
    not_ranked = {j: missing.get(j) or "not ranked in every set: " + ", ".join(
        c.column for c in columns if j not in c.points) for j in judges if j not in mean.points}
    if not mean.points:
        return Ranking(column=MEAN_COLUMN, metric=metric, n_test=0, n_units=0, entries=(), not_ranked=not_ranked)
    return Ranking(column=MEAN_COLUMN, metric=metric, n_test=mean.n_test, n_units=mean.n_units,
                   entries=_entries(mean.points, mean.draws), not_ranked=not_ranked)


def versus_baseline(column: ColumnDraws, baseline: str, metric: str) -> BaselineComparison | None:
    """Every judge's paired difference from ``baseline`` in one column; ``None`` when the baseline is not ranked there."""
    if baseline not in column.points:
        return None
    entries = []
    for j, point in column.points.items():
        if j == baseline:
            continue
        d = _interval(column.draws[j] - column.draws[baseline], point - column.points[baseline])
        entries.append(BaselineEntry(judge=j, difference=d, worse=d.high is not None and d.high < 0,
                                     better=d.low is not None and d.low > 0))
    return BaselineComparison(column=column.column, baseline=baseline, metric=metric, entries=tuple(entries))


def agreement_between(cells: Sequence[CellScores]) -> list[Kappa]:
    """Cohen's kappa of every pair of judges' verdicts (each at its own threshold) on the rows both scored."""
    out = []
    for i, a in enumerate(cells):
        for b in cells[i + 1:]:
            ids = [k for k in a.ids("test") if k in b.scores]
            va = np.array([a.scores[k] >= a.threshold for k in ids], dtype=int)
            sb = np.array([b.scores[k] for k in ids], dtype=float)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                k = cohen_kappa_score(va, sb, threshold=b.threshold) if ids else math.nan
            out.append(Kappa(judge_a=a.judge, judge_b=b.judge, column=a.column, n=len(ids),
                             kappa=None if math.isnan(k) else round(float(k), 6)))
    return out
