"""Comparing two judges on the same rows: paired bootstrap and McNemar's test.

The bootstrap draws rows that share ``meta["pair"]`` together (``_pairing``),
as the gate does: correlated rows are not independent evidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.calibration.analysis._bootstrap import Interval
from judgelab.calibration.analysis._metrics import fast_binary_metrics
from judgelab.calibration.analysis._pairing import PairResampling, pair_units, unit_bootstrap
from judgelab.calibration.data import ScoreRecord
from judgelab.errors import DataError

__all__ = ["Comparison", "compare_runs", "mcnemar_test"]

COMPARED = ("accuracy", "balanced_accuracy", "f1", "mcc", "auroc", "auprc", "brier", "ece")


def mcnemar_test(correct_a: ArrayLike, correct_b: ArrayLike) -> tuple[int, int, float]:
    """McNemar's test on paired correctness.

    Returns
    -------
    b, c, p_value
        ``b`` rows only A got right, ``c`` rows only B got right, and the
        two-sided p-value (exact binomial when b + c < 25, else chi-square
        with continuity correction).
    """
    from scipy import stats

    a = np.asarray(correct_a, dtype=bool)
    bb = np.asarray(correct_b, dtype=bool)
    b = int(np.count_nonzero(a & ~bb))
    c = int(np.count_nonzero(~a & bb))
    if b + c == 0:
        return b, c, 1.0
    if b + c < 25:
        p = stats.binomtest(b, b + c, 0.5).pvalue
    else:
        chi2 = (abs(b - c) - 1) ** 2 / (b + c)
        p = stats.chi2.sf(chi2, 1)
    return b, c, float(p)


@dataclass(frozen=True)
class Comparison:
    """B minus A on the rows both runs scored."""

    n: int
    threshold_a: float
    threshold_b: float
    metrics_a: dict[str, float]
    metrics_b: dict[str, float]
    difference: dict[str, Interval]  # B - A, paired bootstrap
    mcnemar_b: int
    mcnemar_c: int
    mcnemar_p: float
    only_a: int
    only_b: int
    resampling: PairResampling = field(default_factory=lambda: PairResampling(0, 0))
    """How the bootstrap drew the rows (rows of one unit together)."""

    def to_dict(self) -> dict[str, object]:
        def num(x: object) -> object:
            return None if isinstance(x, float) and math.isnan(x) else x

        return {
            "n": self.n,
            "threshold_a": self.threshold_a,
            "threshold_b": self.threshold_b,
            "metrics_a": {k: num(v) for k, v in self.metrics_a.items()},
            "metrics_b": {k: num(v) for k, v in self.metrics_b.items()},
            "difference_b_minus_a": {k: v.to_dict() for k, v in self.difference.items()},
            "mcnemar": {"only_a_correct": self.mcnemar_b, "only_b_correct": self.mcnemar_c, "p_value": self.mcnemar_p},
            "rows_only_in_a": self.only_a,
            "rows_only_in_b": self.only_b,
            "resampling": self.resampling.to_dict(),
        }


def compare_runs(
    records_a: Sequence[ScoreRecord],
    records_b: Sequence[ScoreRecord],
    *,
    threshold_a: float = 0.5,
    threshold_b: float = 0.5,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Comparison:
    """Compare two runs on their shared, successfully scored rows.

    Parameters
    ----------
    records_a, records_b
        The two runs' records (e.g. ``read_scores(a)``).
    threshold_a, threshold_b
        Each judge's decision threshold.
    n_resamples, seed
        Paired bootstrap settings: both judges' scores of a row are drawn
        together, and so are rows of one unit (``ScoreRecord.unit``, in either run).

    Raises
    ------
    DataError
        If the runs share no rows or disagree on a row's label.
    """
    a = {r.id: r for r in records_a if r.ok}
    b = {r.id: r for r in records_b if r.ok}
    ids = [i for i in a if i in b]
    if not ids:
        raise DataError("The two runs share no scored rows; compare runs of the same labelled set.")
    bad = [i for i in ids if a[i].label != b[i].label]
    if bad:
        raise DataError(f"The runs disagree on the label of {len(bad)} row(s), e.g. {bad[0]!r}; they are not the same set.")
    y = np.array([a[i].label for i in ids])
    sa = np.array([a[i].score for i in ids], dtype=float)
    sb = np.array([b[i].score for i in ids], dtype=float)

    def diff(y: npt.NDArray[np.int_], sa: npt.NDArray[np.float64], sb: npt.NDArray[np.float64]) -> dict[str, float]:
        ma = fast_binary_metrics(y, sa, threshold_a)
        mb = fast_binary_metrics(y, sb, threshold_b)
        return {k: mb[k] - ma[k] for k in COMPARED}

    units = pair_units([a[i].unit for i in ids], [b[i].unit for i in ids])
    d, how = unit_bootstrap(diff, [y, sa, sb], units, n_resamples=n_resamples, seed=seed)
    correct_a = (sa >= threshold_a) == (y == 1)
    correct_b = (sb >= threshold_b) == (y == 1)
    mb_, mc_, p = mcnemar_test(correct_a, correct_b)
    ma_all = fast_binary_metrics(y, sa, threshold_a)
    mb_all = fast_binary_metrics(y, sb, threshold_b)
    return Comparison(
        n=len(ids),
        threshold_a=threshold_a,
        threshold_b=threshold_b,
        metrics_a={k: ma_all[k] for k in COMPARED},
        metrics_b={k: mb_all[k] for k in COMPARED},
        difference=d,
        mcnemar_b=mb_,
        mcnemar_c=mc_,
        mcnemar_p=p,
        only_a=len(a) - len(ids),
        only_b=len(b) - len(ids),
        resampling=how,
    )
