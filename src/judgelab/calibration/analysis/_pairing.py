"""Rows that belong together are resampled together: ``meta["pair"]`` groups for gate and compare.

Two rows that share ``meta["pair"]`` (two edits of one summary, the right and
the hallucinated answer to one question) are correlated; a bootstrap that
draws them one by one treats them as independent evidence and gives
intervals that are too narrow. ``pair_groups`` joins the group keys that two
runs give a row (a row's pair may differ between a baseline and a new set),
and ``grouped_bootstrap`` resamples whole groups (the gate passes the groups to
``paired_difference`` / ``unpaired_difference`` as ``units``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from judgelab.calibration.analysis._bootstrap import Interval, bootstrap_many

__all__ = ["PairResampling", "grouped_bootstrap", "pair_groups"]


@dataclass(frozen=True)
class PairResampling:
    """How a bootstrap drew its rows: ``n_groups`` groups of ``n_rows`` rows."""

    n_rows: int
    n_groups: int

    @property
    def by_pair(self) -> bool:
        """Whether some rows were drawn together (fewer groups than rows)."""
        return self.n_groups < self.n_rows

    def describe(self) -> str:
        """``"80 meta.pair groups of 160 rows resampled together"`` or ``"160 rows resampled one by one: ..."``."""
        if self.by_pair:
            return f"{self.n_groups} meta.pair groups of {self.n_rows} rows resampled together"
        return f"{self.n_rows} rows resampled one by one: no meta.pair groups"

    def to_dict(self) -> dict[str, int | bool]:
        return {"rows": self.n_rows, "groups": self.n_groups, "by_pair": self.by_pair}


def pair_groups(*keys: Sequence[str]) -> np.ndarray:
    """One group label per row, joining rows that share a key in any of ``keys``.

    Parameters
    ----------
    *keys
        Equal-length sequences of group keys (``ScoreRecord.fold_key``), one
        per run. Rows ``i`` and ``j`` are in one group when any run gives them
        the same key, directly or through other rows (union-find).

    Returns
    -------
    ndarray of int
        Group labels ``0..n_groups-1``.
    """
    n = len(keys[0]) if keys else 0
    if any(len(k) != n for k in keys):
        raise ValueError("pair_groups needs key sequences of equal length")
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


def _resampling(groups: np.ndarray) -> PairResampling:
    return PairResampling(len(groups), len(np.unique(groups)) if len(groups) else 0)


def grouped_bootstrap(
    statistic: Callable[..., dict[str, float]],
    arrays: Sequence[np.ndarray],
    groups: np.ndarray,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> tuple[dict[str, Interval], PairResampling]:
    """``bootstrap_many`` that resamples whole groups (``pair_groups``); also says how it drew."""
    how = _resampling(groups)
    out = bootstrap_many(statistic, arrays, n_resamples=n_resamples, confidence=confidence, seed=seed,
                         clusters=groups if how.by_pair else None)
    return out, how

