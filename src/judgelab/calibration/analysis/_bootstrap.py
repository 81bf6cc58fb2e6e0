"""Percentile bootstrap intervals; rows of one resampling unit (``units``) are drawn together."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.calibration.data import IntervalRecord, renamed_keyword
from judgelab.errors import JudgelabError

__all__ = ["Interval", "Resampling", "bootstrap_interval", "bootstrap_many", "paired_difference", "shared_units",
           "unpaired_difference"]


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float = 0.95

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in [low, high] (false when the interval is nan)."""
        return bool(self.low <= value <= self.high)

    @classmethod
    def of(cls, record: IntervalRecord) -> Interval:
        """A run file's interval as an ``Interval`` (``None`` as nan, the 95% level judgelab writes)."""
        def num(x: float | None) -> float:
            return math.nan if x is None else x

        return cls(num(record.estimate), num(record.low), num(record.high))

    def to_dict(self) -> dict[str, float | None]:
        """Estimate, low and high as JSON-ready data (nan as ``None``), as run files write an interval.

        A record's interval field (``IntervalField``) takes the ``Interval`` itself.
        """
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {"estimate": num(self.estimate), "low": num(self.low), "high": num(self.high)}

    def __format__(self, spec: str) -> str:
        spec = spec or ".3f"
        if math.isnan(self.estimate):
            return "n/a"
        if math.isnan(self.low):
            return f"{self.estimate:{spec}} [n/a]"
        return f"{self.estimate:{spec}} [{self.low:{spec}}, {self.high:{spec}}]"


@dataclass(frozen=True)
class Resampling:
    """Bootstrap settings: how many resamples, the interval level, the seed (``None``: fresh randomness)."""

    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int | None = 0


def _check(n_resamples: int, confidence: float) -> None:
    if not isinstance(n_resamples, int) or n_resamples < 1:
        raise JudgelabError(f"The 'n_resamples' parameter must be an int >= 1. Got {n_resamples!r} instead.")
    if not 0 < confidence < 1:
        raise JudgelabError(f"The 'confidence' parameter must be in (0, 1). Got {confidence!r} instead.")


def shared_units(units: Iterable[str] | None) -> npt.NDArray[np.str_] | None:
    """``units`` as an array when some unit holds more than one row, else None (the plain row bootstrap).

    Drawing single-row units one by one is the row bootstrap, but with other
    random draws; callers pass this to ``bootstrap_many(units=...)`` so that
    rows without partners are resampled exactly as rows always were.
    """
    if units is None:
        return None
    u = np.asarray(list(units))
    return u if len(u) and len(np.unique(u)) < len(u) else None


def _unit_indices(units: Iterable[str], n_resamples: int, rng: np.random.Generator) -> list[npt.NDArray[np.intp]]:
    """Resample whole units with replacement; each resample keeps all rows of its units."""
    _, inverse = np.unique(np.asarray(list(units)), return_inverse=True)
    members = [np.flatnonzero(inverse == c) for c in range(inverse.max() + 1)]
    picks = rng.integers(0, len(members), size=(n_resamples, len(members)))
    return [np.concatenate([members[c] for c in row]) for row in picks]


def _resample_indices(n: int, n_resamples: int, rng: np.random.Generator, strata: ArrayLike | None) -> npt.NDArray[np.intp]:
    if strata is None:
        return rng.integers(0, n, size=(n_resamples, n))
    strata = np.asarray(strata)
    parts = []
    for value in np.unique(strata):
        members = np.flatnonzero(strata == value)
        parts.append(members[rng.integers(0, len(members), size=(n_resamples, len(members)))])
    return np.concatenate(parts, axis=1)


def bootstrap_many(
    statistic: Callable[..., dict[str, float]],
    arrays: Sequence[npt.NDArray[np.generic]],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
    strata: ArrayLike | None = None,
    units: Iterable[str] | None = None,
    clusters: Iterable[str] | None = None,
) -> dict[str, Interval]:
    """Percentile bootstrap of a statistic that returns several named numbers.

    Parameters
    ----------
    statistic
        Called as ``statistic(*resampled_arrays)``; returns ``{name: value}``.
    arrays
        Arrays of equal length, resampled together (paired) by row.
    n_resamples, confidence, seed
        Bootstrap size, interval level and random seed (``None`` for fresh
        randomness; 0 is a seed like any other).
    strata
        Optional row labels; rows are resampled within each stratum so that
        every resample keeps the strata sizes.
    units
        Optional resampling unit per row (rows that belong together: two
        answers to one question, ``ScoreRecord.unit``); whole units are
        resampled, so intervals on paired data are not too narrow. Not
        combined with ``strata``.
    clusters
        Deprecated name of ``units`` (warns; removed in the next release).

    Returns
    -------
    dict of Interval
        Resamples where a value is nan (e.g. one class only) are left out;
        when fewer than half are usable the interval is nan.
    """
    _check(n_resamples, confidence)
    units = renamed_keyword(units, clusters, old="clusters", new="units", where="bootstrap_many")
    arrays = [np.asarray(a) for a in arrays]
    n = len(arrays[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        point = statistic(*arrays)
    if n == 0:
        return {k: Interval(float(v), math.nan, math.nan, confidence) for k, v in point.items()}
    rng = np.random.default_rng(seed)
    if units is not None and strata is not None:
        raise JudgelabError("bootstrap_many takes strata or units, not both.")
    idx: npt.NDArray[np.intp] | list[npt.NDArray[np.intp]]
    if units is not None:
        idx = _unit_indices(units, n_resamples, rng)
    else:
        idx = _resample_indices(n, n_resamples, rng, strata)
    draws: dict[str, list[float]] = {k: [] for k in point}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in idx:
            values = statistic(*(a[row] for a in arrays))
            for k in draws:
                draws[k].append(values.get(k, math.nan))
    alpha = (1 - confidence) / 2
    out = {}
    for k, v in point.items():
        d = np.asarray(draws[k], dtype=float)
        d = d[~np.isnan(d)]
        if len(d) < n_resamples / 2 or math.isnan(v):
            out[k] = Interval(float(v), math.nan, math.nan, confidence)
        else:
            lo, hi = np.quantile(d, [alpha, 1 - alpha])
            out[k] = Interval(float(v), float(lo), float(hi), confidence)
    return out


def bootstrap_interval(
    metric: Callable[..., float],
    *arrays: ArrayLike,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
    strata: ArrayLike | None = None,
) -> Interval:
    """Percentile bootstrap interval of one metric, e.g. ``bootstrap_interval(roc_auc_score, y, s)``."""
    res = bootstrap_many(
        lambda *a: {"v": metric(*a)},
        [np.asarray(x) for x in arrays],
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        strata=strata,
    )
    return res["v"]


def paired_difference(
    statistic: Callable[..., float],
    shared: Sequence[npt.NDArray[np.generic]],
    a: Sequence[npt.NDArray[np.generic]],
    b: Sequence[npt.NDArray[np.generic]],
    *,
    units: Iterable[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Interval of ``statistic(*shared, *b) - statistic(*shared, *a)`` over the same rows, resampled together.

    For two judges (or two runs) scored on the same rows: ``shared`` are the
    row arrays both use (e.g. the labels), ``a`` and ``b`` each side's (e.g.
    the scores). Rows are resampled once for both sides; rows sharing a unit
    (``units``: ``ScoreRecord.unit``) are resampled as a whole when any unit
    holds more than one row.
    """
    k_shared, k_a = len(shared), len(a)

    def stat(*arrays: npt.NDArray[np.generic]) -> dict[str, float]:
        s, x, y = arrays[:k_shared], arrays[k_shared:k_shared + k_a], arrays[k_shared + k_a:]
        return {"d": statistic(*s, *y) - statistic(*s, *x)}

    return bootstrap_many(stat, [*shared, *a, *b], n_resamples=n_resamples, seed=seed, confidence=confidence,
                          units=shared_units(units))["d"]


def unpaired_difference(
    statistic: Callable[..., float],
    a: Sequence[npt.NDArray[np.generic]],
    b: Sequence[npt.NDArray[np.generic]],
    *,
    units: tuple[Iterable[str], Iterable[str]] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Interval of ``statistic(*b) - statistic(*a)`` for two independent samples, each resampled on its own.

    The rows of ``a`` are drawn first, then those of ``b``, from one seeded
    generator; resamples where the difference is nan are left out. ``units``
    (``(units_a, units_b)``, each side's ``ScoreRecord.unit``) makes each
    side draw its rows of one unit together.
    """
    rng = np.random.default_rng(seed)

    def draws(side: Sequence[npt.NDArray[np.generic]], side_units: Iterable[str] | None) -> tuple[float, npt.NDArray[np.float64]]:
        arrays = [np.asarray(x) for x in side]
        point = statistic(*arrays)
        idx: npt.NDArray[np.intp] | list[npt.NDArray[np.intp]]
        if side_units is None:
            idx = rng.integers(0, len(arrays[0]), size=(n_resamples, len(arrays[0])))
        else:
            idx = _unit_indices(side_units, n_resamples, rng)
        return point, np.array([statistic(*(x[i] for x in arrays)) for i in idx], dtype=float)

    ua, ub = units if units is not None else (None, None)
    pa, da = draws(a, ua)
    pb, db = draws(b, ub)
    d = db - da
    d = d[~np.isnan(d)]
    q = (1 - confidence) / 2
    lo, hi = np.quantile(d, [q, 1 - q]) if len(d) else (math.nan, math.nan)
    return Interval(float(pb - pa), float(lo), float(hi), confidence)
