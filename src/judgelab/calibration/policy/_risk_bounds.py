"""Finite-sample p-values for "this risk is at most alpha", and how many rows a test needs.

Each null is ``H0: R > alpha`` for a ratio of expectations ``R = E[num] / E[den]``
over i.i.d. (exchangeable) units:

- every unit is one row (``num, den`` in {0, 1}): conditional on the number
  ``k`` of rows in the denominator, the bad rows among them are
  ``Binomial(k, R)``, so ``P(Binomial(k, alpha) <= observed)`` is an exact
  p-value (the binomial tail bound of Learn-then-Test);
- units of several rows (pairs, threads): per unit ``W = (num - alpha*den)/m + alpha``
  lies in [0, 1] when every unit has at most ``m`` rows, and
  ``E[W] <= alpha`` exactly when ``R <= alpha``; a betting test on the
  units' ``W`` (``betting_pvalue``) tests ``H0`` with the unit, not the row,
  as the sample. Units whose ``den`` is 0 carry no information about ``R``
  and are conditioned away (the remaining units are still i.i.d.).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

__all__ = ["betting_pvalue", "binomial_pvalue", "rows_needed"]


def binomial_pvalue(k: ArrayLike, n: ArrayLike, alpha: float) -> npt.NDArray[np.float64]:
    """``P(Binomial(n, alpha) <= k)``: a valid p-value for ``H0: rate > alpha``; 1 where ``n == 0``."""
    from scipy import stats

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        p = stats.binom.cdf(np.floor(k + 1e-9), np.maximum(n, 1), alpha)
    return np.where(n > 0, p, 1.0)


def rows_needed(observed_rate: float, alpha: float, delta: float, *, limit: int = 10_000_000) -> int | None:
    """The fewest rows in the denominator for the binomial test to certify ``rate <= alpha`` at ``delta``.

    Assumes the observed rate stays what it is (``floor(rate * n)`` bad
    rows of ``n``). ``None`` when the observed rate is not below ``alpha``
    (no number of rows certifies it) or the answer exceeds ``limit``.
    """
    if not observed_rate < alpha:
        return None

    def ok(n: int) -> bool:
        return float(binomial_pvalue(math.floor(observed_rate * n), n, alpha)) <= delta

    hi = 1
    while not ok(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = hi // 2
    while lo + 1 < hi:  # p-value is (nearly) decreasing in n: find the first n that passes
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def betting_pvalue(w: ArrayLike, alpha: float, delta: float) -> float:
    """Betting p-value for ``H0: E[W] >= alpha`` from i.i.d. ``W`` in [0, 1], in the order given.

    The capital ``K_t = prod_{i<=t} (1 + lambda_i (alpha - W_i))`` is a
    nonnegative supermartingale under ``H0`` for any predictable
    ``0 <= lambda_i <= 1/(1 - alpha)``, so ``1 / max_t K_t`` is a valid p-value
    (Ville's inequality). ``lambda_i`` is the predictable plug-in of
    Waudby-Smith and Ramdas (2024, "Estimating means of bounded random
    variables by betting", JRSS-B): it adapts to the variance of ``W``,
    which Hoeffding-Bentkus cannot (they assume the worst variance for the
    mean), and units of several rows have small variance.
    """
    w = np.asarray(w, dtype=float)
    n = len(w)
    if n == 0:
        return 1.0
    t = np.arange(1, n + 1)
    dev = np.r_[0.0, np.cumsum((w - (0.5 + np.cumsum(w)) / (t + 1)) ** 2)[:-1]]
    var = (0.25 + dev) / t
    lam = np.minimum(np.sqrt(2 * math.log(1 / delta) / (n * var)), 0.75 / (1 - alpha))
    log_k = np.cumsum(np.log1p(lam * (alpha - w)))
    return float(min(1.0, math.exp(-max(0.0, log_k.max()))))
