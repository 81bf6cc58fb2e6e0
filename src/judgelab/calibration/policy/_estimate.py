"""The share of truly good answers in unlabelled traffic: prediction-powered inference.

A judge's raw pass rate on traffic is biased by its errors (a judge that
leans towards PASS overstates the share of good answers). Prediction-powered
inference (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, 2023,
"Prediction-powered inference", Science 382:669) corrects it with a small
labelled slice scored by the same judge:

    theta_PP = mean(f(traffic)) - mean(f(labelled) - y(labelled))

where ``f`` is the judge's verdict (1 = pass) and ``y`` the true label. The
first term is the naive pass rate; the second, the "rectifier", is the
judge's average error in the direction of PASS, measured where labels are
known. With ``N`` traffic rows and ``n`` labelled rows, the CLT interval is

    theta_PP +- z_{1-a/2} * sqrt(var(f(traffic)) / N + var(f(labelled) - y(labelled)) / n),

valid (asymptotically) whenever the labelled rows are a random sample of the
same traffic, whatever the judge's quality; a better judge only narrows it.
Rows that belong together (one unit, ``ScoreRecord.unit``) can make the plain
variance too small; give ``units_labelled`` / ``units_unlabelled`` and
unit-robust (cluster-robust) variances are used instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.calibration.analysis import Interval
from judgelab.calibration.data import ScoreRecord, renamed_keyword
from judgelab.errors import DataError, JudgelabError

__all__ = ["PassRateEstimate", "estimate_pass_rate", "ppi_mean_interval"]


@dataclass(frozen=True)
class PassRateEstimate:
    """The corrected share of good answers beside the judge's naive pass rate."""

    corrected: Interval  # prediction-powered
    naive: Interval  # the judge's pass rate on the traffic (its own CI, which ignores the judge's errors)
    classical: Interval  # labelled rows alone, no judge
    rectifier: float  # mean(f - y) on the labelled rows: the judge's net lean towards PASS
    n_labelled: int
    n_unlabelled: int
    threshold: float

    def to_dict(self) -> dict[str, object]:
        return {"corrected": self.corrected.to_dict(), "naive": self.naive.to_dict(),
                "classical": self.classical.to_dict(), "rectifier": self.rectifier,
                "n_labelled": self.n_labelled, "n_unlabelled": self.n_unlabelled, "threshold": self.threshold,
                "confidence": self.corrected.confidence, "method": "prediction-powered inference (Angelopoulos et al., 2023)"}


def _z(confidence: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + confidence / 2))


def _var_of_mean(x: npt.NDArray[np.float64], units: npt.NDArray[np.str_] | None) -> float:
    n = len(x)
    if n < 2:
        return math.nan
    if units is None:
        return float(np.var(x, ddof=1) / n)
    _, codes = np.unique(units, return_inverse=True)
    sums = np.bincount(codes, x - x.mean())
    g = len(sums)
    return float((sums**2).sum() / n**2 * g / max(g - 1, 1))


def ppi_mean_interval(y_labelled: ArrayLike, f_labelled: ArrayLike, f_unlabelled: ArrayLike, *, confidence: float = 0.95,
                      units_labelled: Iterable[str] | None = None, units_unlabelled: Iterable[str] | None = None,
                      clusters_labelled: Iterable[str] | None = None, clusters_unlabelled: Iterable[str] | None = None) -> Interval:
    """Prediction-powered interval for ``E[y]`` from predictions ``f`` (Angelopoulos et al., 2023).

    Parameters
    ----------
    y_labelled, f_labelled
        True values and predictions on the labelled rows.
    f_unlabelled
        Predictions on the unlabelled rows.
    confidence
        Interval level in (0, 1).
    units_labelled, units_unlabelled
        Optional unit per row (``ScoreRecord.unit``); rows of one unit count as one
        sample (cluster-robust variance).
    clusters_labelled, clusters_unlabelled
        Deprecated names of ``units_labelled`` / ``units_unlabelled`` (warn; removed in the next release).
    """
    units_labelled = renamed_keyword(units_labelled, clusters_labelled, old="clusters_labelled",
                                     new="units_labelled", where="ppi_mean_interval")
    units_unlabelled = renamed_keyword(units_unlabelled, clusters_unlabelled, old="clusters_unlabelled",
                                       new="units_unlabelled", where="ppi_mean_interval")
    if not 0 < confidence < 1:
        raise JudgelabError(f"The 'confidence' parameter must be in (0, 1). Got {confidence!r} instead.")
    y = np.asarray(y_labelled, dtype=float)
    fl = np.asarray(f_labelled, dtype=float)
    fu = np.asarray(f_unlabelled, dtype=float)
    if len(y) != len(fl):
        raise JudgelabError(f"y_labelled and f_labelled differ in length ({len(y)} and {len(fl)}).")
    if len(y) < 2 or len(fu) < 2:
        raise DataError(f"Prediction-powered inference needs at least 2 labelled and 2 unlabelled rows; "
                        f"got {len(y)} and {len(fu)}.")
    rect = fl - y
    theta = float(fu.mean() - rect.mean())
    ul = None if units_labelled is None else np.asarray(units_labelled)
    uu = None if units_unlabelled is None else np.asarray(units_unlabelled)
    se = math.sqrt(_var_of_mean(fu, uu) + _var_of_mean(rect, ul))
    z = _z(confidence)
    return Interval(theta, max(0.0, theta - z * se), min(1.0, theta + z * se), confidence)


def _wald(x: npt.NDArray[np.float64], confidence: float, units: npt.NDArray[np.str_] | None = None) -> Interval:
    m = float(x.mean()) if len(x) else math.nan
    se = math.sqrt(_var_of_mean(x, units)) if len(x) > 1 else math.nan
    z = _z(confidence)
    return Interval(m, max(0.0, m - z * se), min(1.0, m + z * se), confidence)


def estimate_pass_rate(labelled: Sequence[ScoreRecord], unlabelled: Sequence[ScoreRecord], *,
                       threshold: float, confidence: float = 0.95) -> PassRateEstimate:
    """The share of truly good answers in ``unlabelled``, corrected with the judge's errors on ``labelled``.

    Parameters
    ----------
    labelled
        Scored records with true labels (a random sample of the traffic).
    unlabelled
        Scored records of the traffic (labels, if any, are ignored).
    threshold
        The judge passes a row when ``score >= threshold`` (the run's shipped threshold).
    confidence
        Interval level.
    """
    lab = [r for r in labelled if r.ok]
    unl = [r for r in unlabelled if r.ok]
    y = np.array([r.label for r in lab], dtype=float)
    fl = np.array([r.score is not None and r.score >= threshold for r in lab], dtype=float)  # ok rows have scores
    fu = np.array([r.score is not None and r.score >= threshold for r in unl], dtype=float)
    ul = np.array([r.unit for r in lab])
    uu = np.array([r.unit for r in unl])
    corrected = ppi_mean_interval(y, fl, fu, confidence=confidence, units_labelled=ul, units_unlabelled=uu)
    return PassRateEstimate(corrected=corrected, naive=_wald(fu, confidence, uu), classical=_wald(y, confidence, ul),
                            rectifier=float((fl - y).mean()), n_labelled=len(lab), n_unlabelled=len(unl),
                            threshold=float(threshold))
