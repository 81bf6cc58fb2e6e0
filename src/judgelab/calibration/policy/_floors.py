"""The gate's floors: how many labelled rows, and how much agreement with them, before a judge may pass.

Some teams refuse a CI gate on a judge that was measured on a handful of
labels, or that agrees with its labels little more than chance does.
``GateFloors`` states both: ``min_rows`` (the new run's scored, labelled
rows) and ``min_kappa`` (Cohen's kappa of the new run's verdicts at the
baseline's threshold against its labels; the point estimate is compared,
and the interval is printed beside it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from judgelab.calibration.analysis import Agreement, Resampling, agreement, pair_units
from judgelab.calibration.data import ScoreRecord
from judgelab.errors import check_parameter

__all__ = ["GateFloors", "new_run_agreement"]


@dataclass(frozen=True)
class GateFloors:
    """What a new run must reach before the gate passes; None: no floor.

    Attributes
    ----------
    min_rows
        Fewest scored, labelled rows in the new run (an int >= 1).
    min_kappa
        Lowest Cohen's kappa of the new run's verdicts against its labels
        (a number in [-1, 1]).
    """

    min_rows: int | None = None
    min_kappa: float | None = None

    def check(self, where: str = "gate") -> None:
        """Reject out-of-range floors (one ``ParameterError`` line)."""
        m = self.min_rows
        check_parameter(m is None or (isinstance(m, int) and not isinstance(m, bool) and m >= 1), "min_rows", where,
                        "None or an int >= 1", m)
        k = self.min_kappa
        check_parameter(k is None or (isinstance(k, (int, float)) and not isinstance(k, bool) and -1 <= k <= 1),
                        "min_kappa", where, "None or a number in [-1, 1]", k)

    def rows_failure(self, n_rows: int) -> str | None:
        """The one-line reason when the new run has fewer labelled rows than ``min_rows``."""
        if self.min_rows is None or n_rows >= self.min_rows:
            return None
        return (f"the new run has {n_rows} labelled rows, fewer than --min-rows {self.min_rows}: label more rows "
                "before gating on this judge")

    def kappa_failure(self, agree: Agreement) -> str | None:
        """The one-line reason when the new run's kappa is below ``min_kappa`` (or undefined)."""
        if self.min_kappa is None:
            return None
        k = agree.cohen_kappa
        if k.estimate is None:
            return (f"Cohen's kappa is undefined on the new run's {agree.n} rows (its labels or verdicts at "
                    f"threshold {agree.threshold:.3f} hold one class only), so --min-kappa {self.min_kappa:g} "
                    "cannot be met")
        if k.estimate >= self.min_kappa:
            return None
        return (f"Cohen's kappa {k:.3f} of the new run's verdicts at threshold {agree.threshold:.3f} against its "
                f"{agree.n} labels is below --min-kappa {self.min_kappa:g}")

    def describe(self) -> str:
        parts = [f"--min-rows {self.min_rows}" if self.min_rows is not None else "",
                 f"--min-kappa {self.min_kappa:g}" if self.min_kappa is not None else ""]
        return ", ".join(p for p in parts if p) or "none"


def new_run_agreement(records: Sequence[ScoreRecord], threshold: float, resampling: Resampling) -> Agreement:
    """Kappa, TPR and TNR of ``records`` at ``threshold``, rows of one unit resampled together."""
    y = np.array([r.label for r in records], dtype=int)
    s = np.array([r.score for r in records], dtype=float)
    units = pair_units([r.unit for r in records])
    return agreement(y, s, threshold=threshold, units=[str(u) for u in units], rows="all (new run)",
                     n_resamples=resampling.n_resamples, seed=resampling.seed)
