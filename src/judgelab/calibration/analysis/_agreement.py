"""Agreement with the labels, as reviewers ask for it: Cohen's kappa, TPR and TNR, and a length-bias check.

Each metric is one function of ``(y_true, y_score)`` with keyword-only
options, as in ``_metrics``; a degenerate input (no row of a label, one
class of verdicts) warns and returns nan. ``agreement`` and ``length_bias``
add the intervals: the same percentile bootstrap as the held-out metrics
(``bootstrap_many``), resampling rows of one unit (``ScoreRecord.unit``) together.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.calibration.analysis._bootstrap import Interval, bootstrap_many, shared_units
from judgelab.calibration.analysis._metrics import _degenerate, _rankdata, _validate
from judgelab.calibration.data import AgreementRecord, LengthBiasRecord, ScoreRecord, renamed_keyword
from judgelab.errors import JudgelabError

__all__ = [
    "AGREEMENT_ROWS",
    "Agreement",
    "LengthBias",
    "agreement",
    "cohen_kappa_score",
    "length_bias",
    "records_length_bias",
    "spearman_correlation",
    "true_negative_rate",
    "true_positive_rate",
]

#: How ``analyze`` names the rows its agreement figures are measured on, by split plan mode.
AGREEMENT_ROWS = {"split": "held-out (test split)", "cv": "held-out (cross-validation folds)",
                  "in-sample": "all (in-sample)"}
#: Fewest rows of a label for a length correlation.
MIN_LENGTH_ROWS = 5


def _counts(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], threshold: float | npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
    pred = s >= threshold
    pos = y == 1
    tp = float(np.count_nonzero(pred & pos))
    fp = float(np.count_nonzero(pred & ~pos))
    fn = float(np.count_nonzero(~pred & pos))
    return tp, fp, fn, float(len(y)) - tp - fp - fn


def _kappa(tp: float, fp: float, fn: float, tn: float) -> float:
    """Kappa from the counts; nan unless labels and verdicts both hold two classes (as ``fast_binary_metrics``)."""
    n = tp + fp + fn + tn
    if not (tp + fn and tn + fp and tp + fp and tn + fn):
        return math.nan
    pe = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / (n * n)
    if pe == 1:
        return math.nan
    return ((tp + tn) / n - pe) / (1 - pe)


def cohen_kappa_score(y_true: ArrayLike, y_score: ArrayLike, *, threshold: float = 0.5) -> float:
    """Cohen's kappa between the labels and the verdicts ``score >= threshold``.

    1 is full agreement, 0 the agreement two raters with these pass rates
    reach by chance. Returns nan (with a warning) when the labels or the
    verdicts hold one class only (as the ``cohen_kappa`` of ``binary_metrics``).
    """
    y, s = _validate(y_true, y_score)
    k = _kappa(*_counts(y, s, threshold))
    return _degenerate("Cohen's kappa", "labels or verdicts hold one class only") if math.isnan(k) else float(k)


def true_positive_rate(y_true: ArrayLike, y_score: ArrayLike, *, threshold: float = 0.5) -> float:
    """Share of rows labelled 1 that pass (``score >= threshold``): sensitivity, recall."""
    y, s = _validate(y_true, y_score)
    tp, _, fn, _ = _counts(y, s, threshold)
    return tp / (tp + fn) if tp + fn else _degenerate("TPR", "y_true has no row labelled 1")


def true_negative_rate(y_true: ArrayLike, y_score: ArrayLike, *, threshold: float = 0.5) -> float:
    """Share of rows labelled 0 that fail (``score < threshold``): specificity."""
    y, s = _validate(y_true, y_score)
    _, fp, _, tn = _counts(y, s, threshold)
    return tn / (tn + fp) if tn + fp else _degenerate("TNR", "y_true has no row labelled 0")


def _rho(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
    ra, rb = _rankdata(a), _rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = math.sqrt(float(np.dot(ra, ra) * np.dot(rb, rb)))
    return float(np.dot(ra, rb) / den) if den else math.nan


def spearman_correlation(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rank correlation of two samples (average ranks for ties); nan when either is constant."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise JudgelabError(f"x and y must be 1-d and the same length. Got shapes {a.shape} and {b.shape}.")
    if len(a) < 2:
        return _degenerate("Spearman correlation", "fewer than two rows")
    r = _rho(a, b)
    return _degenerate("Spearman correlation", "one sample is constant") if math.isnan(r) else r


def _quiet_spearman(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> float:
    return _rho(x, y) if len(x) >= MIN_LENGTH_ROWS else math.nan


Agreement = AgreementRecord
"""What ``agreement`` returns: the ``agreement`` of ``metrics.json`` (``AgreementRecord``)."""


def _agreement_stat(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], t: npt.NDArray[np.float64]) -> dict[str, float]:
    tp, fp, fn, tn = _counts(y, s, t)
    return {"kappa": _kappa(tp, fp, fn, tn), "tpr": tp / (tp + fn) if tp + fn else math.nan,
            "tnr": tn / (tn + fp) if tn + fp else math.nan}


def agreement(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    threshold: float | npt.NDArray[np.float64] = 0.5,
    units: Iterable[str] | None = None,
    rows: str = "all",
    n_resamples: int = 1000,
    seed: int | None = 0,
    groups: Iterable[str] | None = None,
) -> Agreement:
    """Cohen's kappa, TPR and TNR at ``threshold``, each with a percentile bootstrap interval.

    Parameters
    ----------
    y_true, y_score
        Labels (0/1) and scores.
    threshold
        The threshold, or one per row (cross-validation: each fold's own).
    units
        Each row's resampling unit (``ScoreRecord.unit``), rows of one unit
        resampled together; None or all distinct: the plain row bootstrap.
    rows
        Which rows these are, for the report (``"held-out"``, ``"all"``).
    n_resamples, seed
        Bootstrap settings.
    groups
        Deprecated name of ``units`` (warns; removed in the next release).
    """
    units = renamed_keyword(units, groups, old="groups", new="units", where="agreement")
    y, s = _validate(y_true, y_score)
    t = np.broadcast_to(np.asarray(threshold, dtype=float), y.shape).copy()
    res = bootstrap_many(_agreement_stat, [y, s, t], n_resamples=n_resamples, seed=seed, units=shared_units(units))
    shown = float(np.nanmedian(t)) if len(t) else math.nan
    return AgreementRecord(rows=rows, n=len(y), n_label_1=int((y == 1).sum()), n_label_0=int((y == 0).sum()),
                           threshold=shown, cohen_kappa=res["kappa"], tpr=res["tpr"], tnr=res["tnr"])


LengthBias = LengthBiasRecord
"""What ``length_bias`` returns: the ``length_bias`` of ``metrics.json`` (``LengthBiasRecord``)."""


def _excludes_zero(iv: Interval) -> bool:
    return not math.isnan(iv.low) and (iv.low > 0 or iv.high < 0)


def _length_verdict(rho: dict[int, Interval]) -> str:
    """The finding in one sentence."""
    parts = []
    for label, iv in rho.items():
        if _excludes_zero(iv):
            way = "rises" if iv.estimate > 0 else "falls"
            parts.append(f"among rows labelled {label} the score {way} with the judged text's length "
                         f"(Spearman {iv:+.2f})")
    if parts:
        return "Length bias: " + "; ".join(parts) + ". Check the judge on texts of the lengths you will judge."
    if all(math.isnan(iv.low) for iv in rho.values()):
        return "Length bias: not measurable here (too few rows of a label, or one length only)."
    return "No measurable length bias: every label's interval of Spearman's rho includes 0."


def length_bias(
    y_true: ArrayLike,
    y_score: ArrayLike,
    lengths: ArrayLike,
    *,
    units: Iterable[str] | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
    groups: Iterable[str] | None = None,
) -> LengthBias:
    """Spearman's rho of score and judged-text length within each label, with bootstrap intervals.

    Within a label the right verdict is the same for every row, so a score
    that rises or falls with length there is a bias (a judge that prefers
    long answers), not a signal. ``lengths`` may hold nan for rows whose
    length is unknown; they are left out and counted. ``units`` (each row's
    ``ScoreRecord.unit``) resamples rows of one unit together; ``groups`` is
    its deprecated name (warns; removed in the next release).
    """
    units = renamed_keyword(units, groups, old="groups", new="units", where="length_bias")
    y, s = _validate(y_true, y_score)
    n_len = np.asarray(lengths, dtype=float)
    known = ~np.isnan(n_len)
    y, s, n_len = y[known], s[known], n_len[known]
    u = None if units is None else np.asarray(list(units))[known]

    def stat(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], n: npt.NDArray[np.float64]) -> dict[str, float]:
        return {str(k): _quiet_spearman(n[y == k], s[y == k]) for k in (1, 0)}

    res = bootstrap_many(stat, [y, s, n_len], n_resamples=n_resamples, seed=seed, units=shared_units(u))
    rho = {k: res[str(k)] for k in (1, 0)}
    return LengthBiasRecord(
        spearman_by_label={str(k): iv for k, iv in rho.items()},
        rows_by_label={str(k): int((y == k).sum()) for k in (1, 0)},
        median_chars_by_label={str(k): float(np.median(n_len[y == k])) if (y == k).any() else math.nan for k in (1, 0)},
        rows_without_length=int((~known).sum()), moves_with_length=any(map(_excludes_zero, rho.values())),
        verdict=_length_verdict(rho),
    )


def records_length_bias(
    records: Sequence[ScoreRecord], *, units: Iterable[str] | None = None, n_resamples: int = 1000, seed: int | None = 0
) -> LengthBias | None:
    """``length_bias`` of scored records (their ``label``, ``score`` and ``response_chars``).

    None when no record carries ``response_chars`` (records written before
    judgelab recorded it: rescore to measure it).
    """
    lengths = np.array([math.nan if r.response_chars is None else r.response_chars for r in records], dtype=float)
    if not len(lengths) or np.isnan(lengths).all():
        return None
    y = np.array([r.label for r in records], dtype=int)
    s = np.array([r.score for r in records], dtype=float)
    return length_bias(y, s, lengths, units=units, n_resamples=n_resamples, seed=seed)
