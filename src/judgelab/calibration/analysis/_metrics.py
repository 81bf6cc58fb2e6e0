"""Binary-judge metrics: sklearn where it has them, plus ECE.

Every function takes ``(y_true, y_score)`` (labels 0/1, scores in [0, 1])
and keyword-only options. A degenerate input (one class only, nothing
predicted positive) warns and returns nan instead of raising.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike
from sklearn import metrics as skm

from judgelab.errors import JudgelabError

__all__ = [
    "DegenerateMetricWarning",
    "METRICS",
    "THRESHOLD_METRICS",
    "binary_metrics",
    "calibration_bins",
    "expected_calibration_error",
    "fast_binary_metrics",
]

_EPS = 1e-7


class DegenerateMetricWarning(UserWarning):
    """A metric is undefined on this input (e.g. only one class) and is nan."""


def _validate(y_true: ArrayLike, y_score: ArrayLike) -> tuple[npt.NDArray[np.int_], npt.NDArray[np.float64]]:
    y = np.asarray(y_true)
    s = np.asarray(y_score, dtype=float)
    if y.ndim != 1 or s.shape != y.shape:
        raise JudgelabError(
            f"y_true and y_score must be 1-d and the same length. Got shapes {y.shape} and {s.shape}."
        )
    if y.size and not np.isin(y, (0, 1)).all():
        raise JudgelabError("y_true must hold only 0 and 1.")
    if np.isnan(s).any():
        raise JudgelabError("y_score holds nan; drop rows that failed to score first.")
    return y.astype(int), s


def _degenerate(name: str, why: str) -> float:
    warnings.warn(f"{name} is undefined: {why}; returning nan.", DegenerateMetricWarning, stacklevel=3)
    return math.nan


def calibration_bins(
    y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 10, strategy: str = "uniform"
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int_]]:
    """Per-bin mean predicted probability, observed frequency and count.

    Parameters
    ----------
    n_bins
        Number of bins, an int >= 1.
    strategy
        ``"uniform"`` (equal-width bins on [0, 1]) or ``"quantile"``
        (equal-mass bins). Empty bins are dropped.

    Returns
    -------
    mean_pred, frac_pos, counts : ndarray
    """
    if not isinstance(n_bins, int) or n_bins < 1:
        raise JudgelabError(f"The 'n_bins' parameter of calibration_bins must be an int >= 1. Got {n_bins!r} instead.")
    if strategy not in ("uniform", "quantile"):
        raise JudgelabError(
            f"The 'strategy' parameter of calibration_bins must be 'uniform' or 'quantile'. Got {strategy!r} instead."
        )
    y, p = _validate(y_true, y_prob)
    idx = _bin_index(p, n_bins, strategy == "quantile")
    counts = np.bincount(idx, minlength=n_bins)
    sum_p = np.bincount(idx, weights=p, minlength=n_bins)
    sum_y = np.bincount(idx, weights=y, minlength=n_bins)
    keep = counts > 0
    return sum_p[keep] / counts[keep], sum_y[keep] / counts[keep], counts[keep]


def _bin_index(p: npt.NDArray[np.float64], n_bins: int, quantile: bool) -> npt.NDArray[np.intp]:
    """Bin of each probability: equal-width [lo, hi) bins (the last closed), or
    equal-mass bins by rank (so ties cannot empty a bin)."""
    if quantile:
        idx = np.empty(len(p), dtype=int)
        idx[np.argsort(p, kind="mergesort")] = (np.arange(len(p)) * n_bins) // max(len(p), 1)
        return idx
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)


def expected_calibration_error(y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 10, strategy: str = "uniform") -> float:
    """Expected calibration error: count-weighted mean |confidence - accuracy| over bins.

    Lower is better; 0 is perfectly calibrated. ``strategy="quantile"`` gives
    the equal-mass variant. Returns nan (with a warning) on empty input.
    """
    mean_pred, frac_pos, counts = calibration_bins(y_true, y_prob, n_bins=n_bins, strategy=strategy)
    total = counts.sum()
    if total == 0:
        return _degenerate("ECE", "no rows")
    return float(np.sum(counts * np.abs(mean_pred - frac_pos)) / total)


def _one_class(y: npt.NDArray[np.int_]) -> bool:
    return y.size == 0 or y.min() == y.max()


def _auroc(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> float:
    if _one_class(y):
        return _degenerate("AUROC", "y_true holds one class only")
    return float(skm.roc_auc_score(y, s))


def _auprc(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> float:
    if y.size == 0 or y.sum() == 0:
        return _degenerate("AUPRC", "y_true has no positive rows")
    return float(skm.average_precision_score(y, s))


def _log_loss(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> float:
    if y.size == 0:
        return _degenerate("log loss", "no rows")
    return float(skm.log_loss(y, np.clip(s, _EPS, 1 - _EPS), labels=[0, 1]))


def _brier(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> float:
    if y.size == 0:
        return _degenerate("Brier score", "no rows")
    return float(skm.brier_score_loss(y, s, pos_label=1))


def _thresholded(
    name: str, fn: Callable[..., float], need: str | None = None
) -> Callable[[npt.NDArray[np.int_], npt.NDArray[np.float64], float], float]:
    def metric(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], threshold: float) -> float:
        pred = (s >= threshold).astype(int)
        if y.size == 0:
            return _degenerate(name, "no rows")
        if need == "both" and _one_class(y):
            return _degenerate(name, "y_true holds one class only")
        if need == "pos_true" and y.sum() == 0:
            return _degenerate(name, "y_true has no positive rows")
        if need == "pos_pred" and pred.sum() == 0:
            return _degenerate(name, "nothing is predicted positive at this threshold")
        if need == "any_pos" and y.sum() == 0 and pred.sum() == 0:
            return _degenerate(name, "no positive rows and nothing predicted positive")
        if need == "varied" and (_one_class(y) or _one_class(pred)):
            return _degenerate(name, "labels or predictions hold one class only")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(fn(y, pred))

    metric.__name__ = name
    return metric


# Metrics that need a threshold: (y, s, threshold) -> float.
THRESHOLD_METRICS: dict[str, Callable[[npt.NDArray[np.int_], npt.NDArray[np.float64], float], float]] = {
    "accuracy": _thresholded("accuracy", skm.accuracy_score),
    "balanced_accuracy": _thresholded("balanced accuracy", skm.balanced_accuracy_score, "both"),
    "precision": _thresholded("precision", lambda y, p: skm.precision_score(y, p, zero_division=0), "pos_pred"),
    "recall": _thresholded("recall", lambda y, p: skm.recall_score(y, p, zero_division=0), "pos_true"),
    "f1": _thresholded("F1", lambda y, p: skm.f1_score(y, p, zero_division=0), "any_pos"),
    "mcc": _thresholded("MCC", skm.matthews_corrcoef, "varied"),
    "cohen_kappa": _thresholded("Cohen's kappa", skm.cohen_kappa_score, "varied"),
}

# Metrics of the scores themselves: (y, s) -> float.
METRICS: dict[str, Callable[[npt.NDArray[np.int_], npt.NDArray[np.float64]], float]] = {
    "auroc": _auroc,
    "auprc": _auprc,
    "brier": _brier,
    "log_loss": _log_loss,
    "ece": lambda y, s: expected_calibration_error(y, s, n_bins=10, strategy="uniform"),
    "ece_equal_mass": lambda y, s: expected_calibration_error(y, s, n_bins=10, strategy="quantile"),
}

def binary_metrics(y_true: ArrayLike, y_score: ArrayLike, *, threshold: float = 0.5) -> dict[str, float]:
    """All metrics of a binary judge at one threshold.

    Parameters
    ----------
    y_true
        Labels, 1 = should pass, 0 = should fail.
    y_score
        Scores in [0, 1]; a row passes when ``score >= threshold``.
    threshold
        The decision threshold.

    Returns
    -------
    dict
        accuracy, balanced_accuracy, precision, recall, f1, mcc,
        cohen_kappa, auroc, auprc, brier, log_loss, ece (equal-width bins)
        and ece_equal_mass; undefined metrics are nan (with a warning).
    """
    y, s = _validate(y_true, y_score)
    out = {name: fn(y, s, threshold) for name, fn in THRESHOLD_METRICS.items()}
    out.update({name: fn(y, s) for name, fn in METRICS.items()})
    return out


def _ece_fast(y: npt.NDArray[np.int_], p: npt.NDArray[np.float64], n_bins: int, quantile: bool) -> float:
    n = len(p)
    if n == 0:
        return math.nan
    idx = _bin_index(p, n_bins, quantile)
    gap = np.abs(np.bincount(idx, weights=p, minlength=n_bins) - np.bincount(idx, weights=y, minlength=n_bins))
    return float(gap.sum() / n)


def fast_binary_metrics(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], threshold: float | npt.NDArray[np.float64] = 0.5) -> dict[str, float]:
    """``binary_metrics`` in plain numpy, for bootstrap resamples (no warnings).

    Same values as the scikit-learn based ``binary_metrics`` (the test suite
    checks this on random inputs), about fifty times faster.
    """
    y = y.astype(int)
    n = len(y)
    nan = math.nan
    if n == 0:
        return dict.fromkeys(list(THRESHOLD_METRICS) + list(METRICS), nan)
    pred = s >= threshold
    pos = y == 1
    tp = float(np.count_nonzero(pred & pos))
    fp = float(np.count_nonzero(pred & ~pos))
    fn = float(np.count_nonzero(~pred & pos))
    tn = float(n - tp - fp - fn)
    P, N = tp + fn, tn + fp
    PP, PN = tp + fp, tn + fn
    both = P > 0 and N > 0
    varied = both and PP > 0 and PN > 0
    out = {
        "accuracy": (tp + tn) / n,
        "balanced_accuracy": (tp / P + tn / N) / 2 if both else nan,
        "precision": tp / PP if PP else nan,
        "recall": tp / P if P else nan,
        "f1": 2 * tp / (2 * tp + fp + fn) if (P or PP) else nan,
        "mcc": (tp * tn - fp * fn) / math.sqrt(PP * P * N * PN) if varied else nan,
    }
    if varied:
        pe = (PP * P + PN * N) / (n * n)
        out["cohen_kappa"] = ((tp + tn) / n - pe) / (1 - pe) if pe != 1 else nan
    else:
        out["cohen_kappa"] = nan
    if both:
        ranks = _rankdata(s)
        out["auroc"] = (ranks[pos].sum() - P * (P + 1) / 2) / (P * N)
    else:
        out["auroc"] = nan
    if P:
        order = np.argsort(-s, kind="mergesort")
        ss, yy = s[order], y[order]
        last = np.r_[np.flatnonzero(np.diff(ss)), n - 1]  # end of each distinct score
        tps = np.cumsum(yy)[last]
        prec = tps / (last + 1)
        rec = tps / P
        out["auprc"] = float(np.sum(np.diff(np.r_[0.0, rec]) * prec))
    else:
        out["auprc"] = nan
    out["brier"] = float(np.mean((s - y) ** 2))
    c = np.clip(s, _EPS, 1 - _EPS)
    out["log_loss"] = float(-np.mean(y * np.log(c) + (1 - y) * np.log(1 - c)))
    out["ece"] = _ece_fast(y, s, 10, False)
    out["ece_equal_mass"] = _ece_fast(y, s, 10, True)
    return out


def _rankdata(a: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Average ranks (1-based) with ties, like ``scipy.stats.rankdata``."""
    order = np.argsort(a, kind="mergesort")
    sa = a[order]
    first = np.r_[True, sa[1:] != sa[:-1]]
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(a)]
    avg = (starts + ends + 1) / 2.0
    ranks = np.empty(len(a))
    ranks[order] = avg[group]
    return ranks
