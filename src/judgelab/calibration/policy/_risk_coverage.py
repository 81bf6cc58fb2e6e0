"""The risk-coverage frontier of a pass/fail/abstain band: the lowest in-sample risk at each coverage."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.policy._ltt import _as_units, _grid, _pair_stats

__all__ = ["risk_coverage_curve"]


def risk_coverage_curve(records: Sequence[ScoreRecord], *, risk: str = "error",
                        n_levels: int = 50) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """For coverage levels 1/n_levels..1, the lowest in-sample risk of any (lower, upper) pair deciding at least that share."""
    ok = [r for r in records if r.ok]
    d = _as_units([r.score for r in ok], [r.label for r in ok], [r.unit for r in ok])
    g = _grid(d.s, 128)
    st = _pair_stats(d, g, risk)
    tri = np.triu(np.ones((len(g), len(g)), dtype=bool))
    cov = np.where(tri, st.den / max(st.n, 1), -1.0).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(st.den > 0, st.num / np.maximum(st.den, 1), np.inf).ravel()
    levels = np.linspace(1 / n_levels, 1.0, n_levels)
    best = np.array([rate[cov >= c - 1e-12].min() if (cov >= c - 1e-12).any() else math.nan for c in levels])
    return levels, np.where(np.isinf(best), np.nan, best)
