"""Stress metrics: flip rates, consistency and label mass, with bootstrap intervals over units.

Every interval resamples whole units (``LabelledRow.unit``: ``meta["pair"]``
or the row id) with ``bootstrap_many``, as the rest of the calibration suite does,
so edits of one summary or the two answers to one question move together.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis import Interval, bootstrap_many, shared_units

__all__ = [
    "AttackStats",
    "ConsistencyStats",
    "LabelMassStats",
    "attack_stats",
    "choice_stats",
    "label_mass_stats",
    "noul_stats",
    "paraphrase_stats",
]


def _nanmean(x: npt.NDArray[np.float64]) -> float:
    return float(np.mean(x)) if len(x) else math.nan


@dataclass(frozen=True)
class AttackStats:
    """What one perturbation did, measured against the clean scores at the shipped threshold.

    ``fail_to_pass`` is the dangerous flip rate: among rows labelled 0 that the
    clean judge failed, the share that now pass. ``pass_to_fail``: among rows
    labelled 1 that the clean judge passed, the share that now fail.
    ``delta_p`` is the mean change of the score over all rows, ``delta_p_fail``
    over rows labelled 0.
    """

    key: str
    family: str
    kind: str
    n: int
    n_fail: int
    n_pass: int
    fail_to_pass: Interval
    pass_to_fail: Interval
    delta_p: Interval
    delta_p_fail: Interval
    deltas: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key, "family": self.family, "kind": self.kind, "rows": self.n,
            "rows_label0_clean_fail": self.n_fail, "rows_label1_clean_pass": self.n_pass,
            "fail_to_pass": self.fail_to_pass.to_dict(), "pass_to_fail": self.pass_to_fail.to_dict(),
            "delta_p": self.delta_p.to_dict(), "delta_p_label0": self.delta_p_fail.to_dict(),
        }


def _flip_stat(y: npt.NDArray[np.int_], clean_pass: npt.NDArray[np.bool_], pert_pass: npt.NDArray[np.bool_],
               dp: npt.NDArray[np.float64]) -> dict[str, float]:
    fail = (y == 0) & ~clean_pass
    ok = (y == 1) & clean_pass
    return {
        "fail_to_pass": _nanmean(pert_pass[fail].astype(float)) if fail.any() else math.nan,
        "pass_to_fail": _nanmean((~pert_pass[ok]).astype(float)) if ok.any() else math.nan,
        "delta_p": _nanmean(dp),
        "delta_p_fail": _nanmean(dp[y == 0]) if (y == 0).any() else math.nan,
    }


def attack_stats(
    pairs: Sequence[tuple[Mapping[str, Any], float, float]],
    *,
    threshold: float,
    key: str,
    family: str = "",
    kind: str = "attack",
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> AttackStats:
    """Flip rates and mean score change of one perturbation.

    Parameters
    ----------
    pairs
        ``(row facts, clean score, perturbed score)`` per row; the facts need
        ``label`` and ``unit``.
    threshold
        The shipped threshold: a score at or above it passes.
    key, family, kind
        The perturbation's names.
    n_resamples, seed
        Bootstrap settings.
    """
    y = np.array([int(f["label"]) for f, _, _ in pairs], dtype=int)
    c = np.array([s for _, s, _ in pairs], dtype=float)
    p = np.array([s for _, _, s in pairs], dtype=float)
    units = [str(f["unit"]) for f, _, _ in pairs]
    cp, pp, dp = c >= threshold, p >= threshold, p - c
    res = bootstrap_many(_flip_stat, [y, cp, pp, dp], n_resamples=n_resamples, seed=seed, units=shared_units(units))
    return AttackStats(
        key=key, family=family, kind=kind, n=len(y),
        n_fail=int(((y == 0) & ~cp).sum()), n_pass=int(((y == 1) & cp).sum()),
        fail_to_pass=res["fail_to_pass"], pass_to_fail=res["pass_to_fail"],
        delta_p=res["delta_p"], delta_p_fail=res["delta_p_fail"], deltas=tuple(float(x) for x in dp),
    )


@dataclass(frozen=True)
class ConsistencyStats:
    """One consistency check: its per-row inconsistency, averaged with an interval.

    ``value`` is the mean per-row figure (|P(Q) + P(not Q) - 1| for ``noul``,
    the largest total-variation distance across option orders for ``choice``,
    max - min of P across the instruction paraphrases for ``paraphrase``);
    ``extra`` holds the check's other numbers (each an ``Interval``).
    """

    check: str
    n: int
    value: Interval
    extra: Mapping[str, Interval]
    description: str

    def to_dict(self) -> dict[str, object]:
        return {"check": self.check, "rows": self.n, "value": self.value.to_dict(),
                "extra": {k: v.to_dict() for k, v in self.extra.items()}, "description": self.description}


def _mean_stats(columns: Mapping[str, npt.NDArray[np.float64]], units: Sequence[str], n_resamples: int, seed: int | None) -> dict[str, Interval]:
    names = list(columns)

    def stat(*arrays: npt.NDArray[np.float64]) -> dict[str, float]:
        return {k: _nanmean(a) for k, a in zip(names, arrays)}

    return bootstrap_many(stat, [np.asarray(columns[k], dtype=float) for k in names],
                          n_resamples=n_resamples, seed=seed, units=shared_units(units))


def noul_stats(rows: Sequence[tuple[str, float, float]], *, n_resamples: int = 1000, seed: int | None = 0) -> ConsistencyStats:
    """``(unit, P(yes | Q), P(yes | not Q))`` per row -> mean |P(Q) + P(not Q) - 1|."""
    q = np.array([r[1] for r in rows], dtype=float)
    nq = np.array([r[2] for r in rows], dtype=float)
    res = _mean_stats({"gap": np.abs(q + nq - 1), "signed": q + nq - 1}, [r[0] for r in rows], n_resamples, seed)
    return ConsistencyStats(
        "noul", len(rows), res["gap"], {"mean P(Q) + P(not Q) - 1": res["signed"]},
        "mean |P(yes | Q) + P(yes | not Q) - 1| (0 when the negated question gets the complementary answer; "
        "a positive signed mean is a bias towards yes)",
    )


def _tv(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    keys = set(a) | set(b)
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in keys)


def choice_stats(
    rows: Sequence[tuple[str, Sequence[tuple[tuple[int, ...], Mapping[str, float]]]]],
    *,
    labels: Sequence[str],
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> ConsistencyStats:
    """``(unit, [(order, {option: P})...])`` per row -> mean largest TV distance across orders.

    ``labels`` are the options in canonical order; ``order[0]`` is the
    canonical index of the option shown first. Also reports the position
    bias: the mean probability of whichever option is shown first, minus one
    over the number of options.
    """
    tv, first = [], []
    for _, answers in rows:
        dists = [d for _, d in answers]
        tv.append(max((_tv(a, b) for i, a in enumerate(dists) for b in dists[i + 1:]), default=0.0))
        shown = [d.get(labels[order[0]], 0.0) - 1 / len(labels) for order, d in answers if order]
        first.append(float(np.mean(shown)) if shown else math.nan)
    res = _mean_stats({"tv": np.array(tv), "first": np.array(first)}, [r[0] for r in rows], n_resamples, seed)
    return ConsistencyStats(
        "choice", len(rows), res["tv"], {"P(option shown first) - 1/k": res["first"]},
        "mean over rows of the largest total-variation distance between the answer distributions "
        "of two option orders (0 when the order does not matter)",
    )


def paraphrase_stats(
    rows: Sequence[tuple[str, Sequence[float]]], *, threshold: float, n_resamples: int = 1000, seed: int | None = 0
) -> ConsistencyStats:
    """``(unit, [P under each instruction wording])`` per row -> mean spread (max - min) of P."""
    spread = np.array([max(ps) - min(ps) for _, ps in rows], dtype=float)
    disagree = np.array([float(len({p >= threshold for p in ps}) > 1) for _, ps in rows], dtype=float)
    res = _mean_stats({"spread": spread, "disagree": disagree}, [r[0] for r in rows], n_resamples, seed)
    return ConsistencyStats(
        "paraphrase", len(rows), res["spread"], {"verdicts differ at the shipped threshold": res["disagree"]},
        "mean over rows of max - min of P across the shipped instruction and three paraphrases",
    )


@dataclass(frozen=True)
class LabelMassStats:
    """The share of the full next-token probability on the labels, and what it says about accuracy."""

    n: int
    low_mass: float
    quantiles: Mapping[str, float]
    n_low: int
    accuracy_low: Interval
    accuracy_high: Interval
    difference: Interval
    masses: tuple[float, ...] = ()

    @property
    def low_is_worse(self) -> bool:
        """Whether low-mass rows are measurably less accurate (the interval of high - low excludes 0)."""
        return bool(not math.isnan(self.difference.low) and self.difference.low > 0)

    def to_dict(self) -> dict[str, object]:
        return {"rows": self.n, "low_mass_at_or_below": self.low_mass, "quantiles": self.quantiles, "rows_low": self.n_low,
                "accuracy_low": self.accuracy_low.to_dict(), "accuracy_high": self.accuracy_high.to_dict(),
                "accuracy_high_minus_low": self.difference.to_dict(), "low_is_worse": self.low_is_worse}


def label_mass_stats(
    rows: Sequence[tuple[str, float, bool]],
    *,
    low_mass: float | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> LabelMassStats:
    """``(unit, label mass, verdict correct)`` per row -> distribution and accuracy by mass.

    ``low_mass`` is the cut below which an answer is low-mass; ``None`` takes
    the run's own lowest quarter (a small base model can put only a few
    percent of the next token on the labels for every row).
    """
    m = np.array([r[1] for r in rows], dtype=float)
    ok = np.array([float(r[2]) for r in rows], dtype=float)
    if low_mass is None:
        low_mass = float(np.quantile(m, 0.25)) if len(m) else math.nan

    def stat(m: npt.NDArray[np.float64], ok: npt.NDArray[np.float64]) -> dict[str, float]:
        low = m <= low_mass
        a_lo = _nanmean(ok[low]) if low.any() else math.nan
        a_hi = _nanmean(ok[~low]) if (~low).any() else math.nan
        return {"low": a_lo, "high": a_hi, "diff": a_hi - a_lo}

    res = bootstrap_many(stat, [m, ok], n_resamples=n_resamples, seed=seed, units=shared_units([r[0] for r in rows]))
    qs = {f"p{int(q * 100)}": float(np.quantile(m, q)) for q in (0.05, 0.25, 0.5, 0.75, 0.95)} if len(m) else {}
    return LabelMassStats(len(m), low_mass, qs, int((m <= low_mass).sum()), res["low"], res["high"], res["diff"],
                          tuple(float(x) for x in m))
