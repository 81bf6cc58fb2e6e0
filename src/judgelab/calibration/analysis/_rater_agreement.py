"""Agreement among raters: Fleiss' kappa of several judges' binary verdicts on the same items."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["fleiss_kappa"]


def fleiss_kappa(verdicts: ArrayLike) -> float:
    """Fleiss' kappa of ``(n_raters, n_items)`` binary verdicts.

    Parameters
    ----------
    verdicts
        One row per rater, one column per item; truthy means pass.

    Returns
    -------
    float
        1 for full agreement, 0 for what chance gives at these pass rates; nan when undefined
        (fewer than two raters, no item, or every verdict the same).
    """
    v = np.atleast_2d(np.asarray(verdicts, dtype=bool))
    r, n = v.shape
    if r < 2 or n == 0:
        return math.nan
    counts = np.stack([v.sum(axis=0), r - v.sum(axis=0)], axis=1).astype(float)  # (n, 2)
    p_item = ((counts ** 2).sum(axis=1) - r) / (r * (r - 1))
    p_cat = counts.sum(axis=0) / (n * r)
    p_e = float((p_cat ** 2).sum())
    return math.nan if p_e >= 1 else float((p_item.mean() - p_e) / (1 - p_e))
