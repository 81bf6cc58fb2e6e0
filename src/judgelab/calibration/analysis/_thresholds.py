"""Choosing a decision threshold, and an abstain band, from labelled scores."""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.calibration.data import AbstainBandRecord
from judgelab.errors import JudgelabError

__all__ = [
    "AbstainBand",
    "ThresholdStrategy",
    "abstain_band",
    "choose_threshold",
    "parse_strategy",
    "threshold_curve",
]

_STRATEGY_HELP = (
    "one of 'balanced_accuracy', 'f1', 'youden', 'precision>=X', 'recall>=X' "
    "(X in (0, 1]) or 'cost:FP,FN' (the costs of a false pass and a false fail)"
)


@dataclass(frozen=True)
class ThresholdStrategy:
    """How to pick a threshold: an objective and its parameters.

    Build one with ``parse_strategy("precision>=0.9")``.
    """

    name: str  # balanced_accuracy | f1 | youden | precision | recall | cost
    target: float | None = None  # for precision>= / recall>=
    cost_fp: float = 1.0
    cost_fn: float = 1.0

    def __str__(self) -> str:
        if self.name in ("precision", "recall"):
            return f"{self.name}>={self.target:g}"
        if self.name == "cost":
            return f"cost:{self.cost_fp:g},{self.cost_fn:g}"
        return self.name


def parse_strategy(text: str | ThresholdStrategy) -> ThresholdStrategy:
    """Read a strategy string such as ``"f1"``, ``"recall>=0.95"`` or ``"cost:5,1"``."""
    if isinstance(text, ThresholdStrategy):
        return text
    s = str(text).strip().lower().replace(" ", "")
    if s in ("balanced_accuracy", "f1", "youden"):
        return ThresholdStrategy(s)
    m = re.fullmatch(r"(precision|recall)>=([0-9.]+)", s)
    if m:
        target = float(m.group(2))
        if 0 < target <= 1:
            return ThresholdStrategy(m.group(1), target=target)
    m = re.fullmatch(r"cost:([0-9.]+),([0-9.]+)", s)
    if m:
        fp, fn = float(m.group(1)), float(m.group(2))
        if fp >= 0 and fn >= 0 and fp + fn > 0:
            return ThresholdStrategy("cost", cost_fp=fp, cost_fn=fn)
    raise JudgelabError(f"The threshold strategy must be {_STRATEGY_HELP}. Got {text!r} instead.")


def _candidates(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> tuple[
        npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Every distinct decision: thresholds between sorted distinct scores.

    Returns thresholds ``t`` (ascending) and, for ``score >= t``, the counts
    tp, fp, fn, tn of each.
    """
    u = np.unique(s)
    mids = (u[:-1] + u[1:]) / 2 if len(u) > 1 else np.empty(0)
    t = np.r_[u[0] - 1e-9 if len(u) else 0.0, mids, (u[-1] + 1e-9) if len(u) else 1.0]
    t = np.clip(t, 0.0, 1.0 + 1e-9)
    order = np.argsort(s)
    ss, yy = s[order], y[order]
    # number of rows with score < t
    below = np.searchsorted(ss, t, side="left")
    pos_below = np.r_[0, np.cumsum(yy)][below]
    P = yy.sum()
    N = len(yy) - P
    fn = pos_below
    tn = below - pos_below
    tp = P - fn
    fp = N - tn
    return t, tp.astype(float), fp.astype(float), fn.astype(float), tn.astype(float)


def threshold_curve(y_true: ArrayLike, y_score: ArrayLike) -> dict[str, npt.NDArray[np.float64]]:
    """Metrics at every distinct threshold (for threshold-vs-metric plots).

    Returns
    -------
    dict
        ``threshold``, ``balanced_accuracy``, ``f1``, ``precision``,
        ``recall``, ``accuracy`` arrays of equal length.
    """
    y = np.asarray(y_true).astype(int)
    s = np.asarray(y_score, dtype=float)
    t, tp, fp, fn, tn = _candidates(y, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        P, N = tp + fn, fp + tn
        tpr = np.where(P > 0, tp / P, np.nan)
        tnr = np.where(N > 0, tn / N, np.nan)
        prec = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan)
    return {
        "threshold": t,
        "balanced_accuracy": (tpr + tnr) / 2,
        "f1": f1,
        "precision": prec,
        "recall": tpr,
        "accuracy": (tp + tn) / max(len(y), 1),
    }


def choose_threshold(y_true: ArrayLike, y_score: ArrayLike, strategy: str | ThresholdStrategy = "balanced_accuracy") -> float:
    """The threshold that optimises ``strategy`` on these rows.

    A row passes when ``score >= threshold``. Ties between equally good
    thresholds go to the one nearest 0.5 (then the lowest).

    Parameters
    ----------
    y_true
        Labels 0/1.
    y_score
        Scores in [0, 1].
    strategy
        ``balanced_accuracy`` and ``youden`` (the same optimum: J = 2*BA-1),
        ``f1``, ``precision>=X`` (highest recall with precision >= X),
        ``recall>=X`` (highest precision with recall >= X; ties -> higher
        threshold), ``cost:FP,FN`` (least total cost).

    Returns
    -------
    float
        The threshold; with a warning, the nearest feasible one when a
        precision/recall target cannot be met, and 0.5 on empty input.
    """
    st = parse_strategy(strategy)
    y = np.asarray(y_true).astype(int)
    s = np.asarray(y_score, dtype=float)
    if y.size == 0:
        warnings.warn("No rows to choose a threshold on; using 0.5.", stacklevel=2)
        return 0.5
    t, tp, fp, fn, tn = _candidates(y, s)
    P, N = tp + fn, fp + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.where(P > 0, tp / P, 0.0)
        tnr = np.where(N > 0, tn / N, 0.0)
        prec = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        if st.name in ("balanced_accuracy", "youden"):
            objective = tpr + tnr
        elif st.name == "f1":
            objective = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        elif st.name == "cost":
            objective = -(st.cost_fp * fp + st.cost_fn * fn)
        elif st.name == "precision":
            feasible = (prec >= st.target) & (tp + fp > 0)
            if not feasible.any():
                warnings.warn(
                    f"No threshold reaches precision >= {st.target:g}; using the most precise one.",
                    stacklevel=2,
                )
                objective = prec + 1e-9 * tpr
            else:
                objective = np.where(feasible, tpr + 1e-9 * prec, -np.inf)
        else:  # recall
            feasible = tpr >= st.target
            objective = np.where(feasible, prec + 1e-12 * t, -np.inf)
    best = np.max(objective)
    ties = np.flatnonzero(np.isclose(objective, best, rtol=0, atol=1e-12))
    pick = ties[np.argmin(np.abs(t[ties] - 0.5))]
    return float(t[pick])


AbstainBand = AbstainBandRecord
"""What ``abstain_band`` returns (``AbstainBandRecord``): fail below ``low``, pass at or above ``high``.

``coverage`` is the share of rows decided and ``error`` the error rate among
them (``None`` when nothing is decided), on the rows the band was measured on.
"""


def _band(low: float, high: float, coverage: float, error: float, target_error: float) -> AbstainBandRecord:
    return AbstainBandRecord(low=low, high=high, coverage=coverage, error=error, target_error=target_error)


def abstain_band(y_true: ArrayLike, y_score: ArrayLike, *, target_error: float = 0.1, n_grid: int = 200) -> AbstainBand:
    """The widest-coverage band whose error among decided rows is <= ``target_error``.

    Parameters
    ----------
    target_error
        The most errors tolerated among decided rows, in (0, 1).
    n_grid
        Candidate band edges are this many score quantiles (plus the ends).

    Returns
    -------
    AbstainBand
        Coverage 0 (low = 0, high just above 1) when no band meets the target.
    """
    if not 0 < target_error < 1:
        raise JudgelabError(f"The 'target_error' parameter must be in (0, 1). Got {target_error!r} instead.")
    y = np.asarray(y_true).astype(int)
    s = np.asarray(y_score, dtype=float)
    n = len(y)
    if n == 0:
        return _band(0.0, 1.0 + 1e-9, 0.0, math.nan, target_error)
    edges = np.unique(np.r_[0.0, np.quantile(s, np.linspace(0, 1, n_grid)), s.max() + 1e-9])
    order = np.argsort(s)
    ss, yy = s[order], y[order]
    below = np.searchsorted(ss, edges, side="left")  # rows with score < edge
    pos_below = np.r_[0, np.cumsum(yy)][below]
    P = yy.sum()
    # low = edges[i] (fail below), high = edges[j] (pass at/above), i <= j
    lo_n, lo_err = below[:, None], pos_below[:, None]
    hi_n = (n - below)[None, :]
    hi_err = ((n - below) - (P - pos_below))[None, :]
    decided = lo_n + hi_n
    errors = lo_err + hi_err
    valid = np.triu(np.ones((len(edges), len(edges)), dtype=bool))
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(decided > 0, errors / decided, np.inf)
    ok = valid & (rate <= target_error) & (decided > 0)
    if not ok.any():
        return _band(0.0, float(edges[-1]), 0.0, math.nan, target_error)
    score = np.where(ok, decided - 1e-6 * rate, -np.inf)
    i, j = np.unravel_index(np.argmax(score), score.shape)
    return _band(
        float(edges[i]), float(edges[j]), float(decided[i, j] / n), float(rate[i, j]), target_error
    )
