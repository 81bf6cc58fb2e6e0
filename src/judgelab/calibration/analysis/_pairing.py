"""Rows that belong together are resampled together: the units of two runs joined, for gate and compare.

Two rows of one unit (``ScoreRecord.unit``, from the file's ``meta["pair"]``:
two edits of one summary, the right and the hallucinated answer to one
question) are correlated; a bootstrap that draws them one by one treats them
as independent evidence and gives intervals that are too narrow.
``pair_units`` joins the units that two runs give a row (a row's pair may
differ between a baseline and a new set), and ``unit_bootstrap`` resamples
whole units (the gate passes them to ``paired_difference`` /
``unpaired_difference`` as ``units``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis._bootstrap import Interval, bootstrap_many
from judgelab.calibration.data import warn_renamed

__all__ = ["PairResampling", "pair_groups", "pair_units", "unit_bootstrap"]


@dataclass(frozen=True)
class PairResampling:
    """How a bootstrap drew its rows: ``n_units`` units of ``n_rows`` rows."""

    n_rows: int
    n_units: int

    @property
    def by_pair(self) -> bool:
        """Whether some rows were drawn together (fewer units than rows)."""
        return self.n_units < self.n_rows

    def describe(self) -> str:
        """``"80 meta.pair groups of 160 rows resampled together"`` or ``"160 rows resampled one by one: ..."``."""
        if self.by_pair:
            return f"{self.n_units} meta.pair groups of {self.n_rows} rows resampled together"
        return f"{self.n_rows} rows resampled one by one: no meta.pair groups"

    def to_dict(self) -> dict[str, int | bool]:
        """As run files write it (the key ``groups`` holds the number of units)."""
        return {"rows": self.n_rows, "groups": self.n_units, "by_pair": self.by_pair}


def pair_units(*keys: Sequence[str]) -> npt.NDArray[np.int_]:
    """One unit per row, joining rows that share a unit in any of ``keys``.

    Parameters
    ----------
    *keys
        Equal-length sequences of units (``ScoreRecord.unit``), one per run.
        Rows ``i`` and ``j`` are in one unit when any run gives them the same
        unit, directly or through other rows (union-find).

    Returns
    -------
    ndarray of int
        Unit labels ``0..n_units-1``.
    """
    n = len(keys[0]) if keys else 0
    if any(len(k) != n for k in keys):
        raise ValueError("pair_units needs key sequences of equal length")
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for run in keys:
        first: dict[str, int] = {}
        for i, key in enumerate(run):
            j = first.setdefault(str(key), i)
            if j != i:
                parent[find(i)] = find(j)
    roots = [find(i) for i in range(n)]
    _, labels = np.unique(np.asarray(roots, dtype=int), return_inverse=True) if n else (None, np.zeros(0, int))
    return np.asarray(labels, dtype=int)


def pair_groups(*keys: Sequence[str]) -> npt.NDArray[np.int_]:
    """Deprecated name of ``pair_units`` (warns; removed in the next release)."""
    warn_renamed("pair_groups", "pair_units", "judgelab.calibration")
    return pair_units(*keys)


def _resampling(units: npt.NDArray[np.int_]) -> PairResampling:
    return PairResampling(len(units), len(np.unique(units)) if len(units) else 0)


def unit_bootstrap(
    statistic: Callable[..., dict[str, float]],
    arrays: Sequence[npt.NDArray[np.generic]],
    units: npt.NDArray[np.int_],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[dict[str, Interval], PairResampling]:
    """``bootstrap_many`` that resamples whole units (``pair_units``); also says how it drew."""
    how = _resampling(units)
    out = bootstrap_many(statistic, arrays, n_resamples=n_resamples, confidence=confidence, seed=seed,
                         units=units if how.by_pair else None)
    return out, how

