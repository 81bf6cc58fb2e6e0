"""Learn then Test over pairs of thresholds: the arrays, p-values, testing path and fit.

The statistics are explained in ``_policy`` (the concept) and ``_risk_bounds``
(the p-values); this module is the vectorised machinery: counts for every
(lower, upper) pair at once, the coverage path learned on the ordering
slice, fixed-sequence testing on the testing slice, and the forecast of the
rows needed when nothing is certified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.calibration._options import options_or_default
from judgelab.calibration.policy._fit_result import PolicyFit, policy_figures
from judgelab.calibration.policy._risk_bounds import betting_pvalue, binomial_pvalue, rows_needed
from judgelab.errors import JudgelabError
from judgelab.evaluators import Band, cascade_decisions

__all__ = ["LTTSettings", "PolicyFit", "Risk", "fit_arrays", "policy_decisions"]

Risk = Literal["error", "false-pass"]


# -- the arrays the test works on ---------------------------------------------------------------


@dataclass(frozen=True)
class _Units:
    s: npt.NDArray[np.float64]  # scores
    y: npt.NDArray[np.int_]  # labels 0/1
    unit: npt.NDArray[np.int_]  # unit code per row, 0..n_units-1

    @property
    def n_units(self) -> int:
        return int(self.unit.max()) + 1 if len(self.unit) else 0

    def subset(self, units: npt.NDArray[np.int64]) -> "_Units":
        keep = np.isin(self.unit, units)
        _, codes = np.unique(self.unit[keep], return_inverse=True)
        return _Units(self.s[keep], self.y[keep], codes.astype(int))


def _as_units(s: ArrayLike | Sequence[float | None], y: ArrayLike, unit: ArrayLike | None) -> _Units:
    s = np.asarray(s, dtype=float)
    y = np.asarray(y).astype(int)
    _, codes = np.unique(np.asarray(unit), return_inverse=True)
    return _Units(s, y, codes.astype(int))


@dataclass(frozen=True)
class _PairStats:
    """Counts for every (lower=g[i], upper=g[j]) pair, i <= j (G x G arrays)."""

    num: npt.NDArray[np.float64]
    den: npt.NDArray[np.float64]
    dec_units: npt.NDArray[np.float64]
    wrong: npt.NDArray[np.float64]
    false_pass: npt.NDArray[np.float64]
    n: int
    n0: int
    n0_units: int


def _pair_stats(d: _Units, g: npt.NDArray[np.float64], risk: str) -> _PairStats:
    n = len(d.s)
    order = np.argsort(d.s, kind="stable")
    ss, yy = d.s[order], d.y[order]
    below = np.searchsorted(ss, g, side="left")  # rows with score < g
    pos_below = np.r_[0, np.cumsum(yy)][below]
    neg_below = below - pos_below
    n1 = int(yy.sum())
    n0 = n - n1
    fail_wrong = pos_below[:, None]  # FAIL rows that should pass
    false_pass = (n0 - neg_below)[None, :]  # PASS rows that should fail
    decided = below[:, None] + (n - below)[None, :]
    wrong = fail_wrong + false_pass
    num = wrong if risk == "error" else np.broadcast_to(false_pass, decided.shape)
    # units with at least one decided row: all but those whose rows all lie in [lower, upper)
    dec_units = _decided_units(d, g)
    zero = d.y == 0
    n0_units = len(np.unique(d.unit[zero]))
    return _PairStats(num.astype(float), decided.astype(float), dec_units, wrong.astype(float),
                      np.broadcast_to(false_pass, decided.shape).astype(float), n, n0, n0_units)


def _decided_units(d: _Units, g: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    G = len(g)
    nu = d.n_units
    if nu == 0:
        return np.zeros((G, G))
    umin = np.full(nu, np.inf)
    umax = np.full(nu, -np.inf)
    np.minimum.at(umin, d.unit, d.s)
    np.maximum.at(umax, d.unit, d.s)
    a = np.searchsorted(g, umin, side="right")  # umin >= g[i]  <=>  i < a
    b = np.searchsorted(g, umax, side="right")  # umax <  g[j]  <=>  j >= b
    h = np.zeros((G + 1, G + 1))
    np.add.at(h, (a, b), 1.0)
    c = np.cumsum(np.cumsum(h[::-1], axis=0)[::-1], axis=1)  # c[a, b] = #{a' >= a, b' <= b}
    undecided = c[1:, :G]
    return nu - undecided


def _unit_size(unit: npt.NDArray[np.int_], mask: npt.NDArray[np.bool_] | None = None) -> int:
    u = unit if mask is None else unit[mask]
    return int(np.bincount(u).max()) if len(u) else 1


def _grid_pvalues(st: _PairStats, alpha: float, mondrian: bool) -> npt.NDArray[np.float64]:
    """Exact binomial p-values for every pair when every unit is one row."""
    p = binomial_pvalue(st.num, st.den, alpha)
    if mondrian:
        p = np.maximum(p, binomial_pvalue(st.false_pass, np.full_like(st.den, st.n0), alpha))
    return p


def _unit_pvalue(d: _Units, lower: float, upper: float, cfg: LTTSettings, sizes: tuple[int, int],
                 order: npt.NDArray[np.int64]) -> float:
    """Betting p-value on units of several rows for one pair (see ``_risk_bounds``); ``sizes``: (m, m0)."""
    alpha, delta, risk, mondrian = cfg.alpha, cfg.delta, cfg.risk, cfg.mondrian
    m, m0 = sizes
    fail, pas = d.s < lower, d.s >= upper
    false_pass = pas & (d.y == 0)
    bad = false_pass | (fail & (d.y == 1)) if risk == "error" else false_pass
    nu = d.n_units

    def p_of(num_rows: npt.NDArray[np.float64], den_rows: npt.NDArray[np.float64], size: int) -> float:
        num = np.bincount(d.unit, num_rows, minlength=nu)[order]
        den = np.bincount(d.unit, den_rows, minlength=nu)[order]
        keep = den > 0
        return betting_pvalue((num[keep] - alpha * den[keep]) / size + alpha, alpha, delta)

    p = p_of(bad.astype(float), (fail | pas).astype(float), m)
    if mondrian:
        p = max(p, p_of(false_pass.astype(float), (d.y == 0).astype(float), m0))
    return p


START_ROWS = 40.0
"""The coverage path starts where about this many testing rows (x the unit size) are decided."""
N_LEVELS = 15
"""Coverage levels on the path."""
MIN_FORECAST_ROWS = 30
"""Pairs deciding fewer calibration rows are not used to forecast the rows needed."""


def _sequence(so: _PairStats, tri: npt.NDArray[np.bool_], cov_o: npt.NDArray[np.float64], n_test_rows: float, m: int) -> npt.NDArray[np.int_]:
    """The order in which candidate pairs are tested, learned on the ordering slice only.

    A path of rising coverage: ``N_LEVELS`` coverage bands from the share
    that decides about ``START_ROWS`` testing rows (times the unit size) up
    to 1; in each band, the ordering slice's lowest-risk pair. The risk rises
    along the path, so fixed-sequence testing walks up it until the risk
    crosses alpha. (Ordering by the ordering slice's own p-values instead
    tests pairs that look good by chance first, and stops at once; tried in
    simulation, it certified fewer policies.)
    """
    valid = tri.ravel() & (so.den.ravel() > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(so.den > 0, so.num / np.maximum(so.den, 1), np.inf).ravel()
    cov = cov_o.ravel()
    start = min(1.0, START_ROWS * max(m, 1) / max(n_test_rows, 1.0))
    seq: list[int] = []
    levels = np.linspace(start, 1.0, N_LEVELS)
    for c, c_next in zip(levels, np.r_[levels[1:], np.inf]):
        ok = np.flatnonzero(valid & (cov >= c - 1e-12) & (cov < c_next - 1e-12))
        if not len(ok):
            continue
        best = ok[np.lexsort((-cov[ok], rate[ok]))[0]]
        if not seq or seq[-1] != best:
            seq.append(int(best))
    return np.array(seq, dtype=int)


def _grid(s: npt.NDArray[np.float64], max_grid: int) -> npt.NDArray[np.float64]:
    inner = np.unique(np.quantile(s, np.linspace(0, 1, max(2, max_grid - 2)))) if len(s) else np.empty(0)
    top = max(1.0, float(s.max()) if len(s) else 1.0) + 1e-9
    return np.unique(np.r_[0.0, inner, top])


# -- fitting -------------------------------------------------------------------------------------


def _fit(d: _Units, cfg: LTTSettings) -> PolicyFit:
    alpha, delta, risk, mondrian = cfg.alpha, cfg.delta, cfg.risk, cfg.mondrian
    ordering_fraction, seed, max_grid = cfg.ordering_fraction, cfg.seed, cfg.max_grid
    nu = d.n_units
    m = _unit_size(d.unit)
    m0 = _unit_size(d.unit, d.y == 0)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(nu)
    n_order = int(round(ordering_fraction * nu))
    n_order = min(max(n_order, 1), nu - 1) if nu >= 2 else 0
    order_units, test_units = perm[:n_order], perm[n_order:]
    do, dt = d.subset(order_units), d.subset(test_units)
    g = _grid(do.s, max_grid)
    G = len(g)
    tri = np.triu(np.ones((G, G), dtype=bool))
    so = _pair_stats(do, g, risk)
    st = _pair_stats(dt, g, risk)
    cov_o = so.den / max(so.n, 1)
    cand = _sequence(so, tri, cov_o, len(dt.s), m)
    if m <= 1 and m0 <= 1:
        p_test = _grid_pvalues(st, alpha, mondrian).ravel()[cand]
    else:
        unit_order = rng.permutation(dt.n_units)
        p_test = np.ones(len(cand))
        for k, c in enumerate(cand):  # fixed sequence: stop at the first pair not rejected
            i, j = np.unravel_index(c, (G, G))
            p_test[k] = _unit_pvalue(dt, float(g[i]), float(g[j]), cfg, (m, m0), unit_order)
            if p_test[k] > delta:
                break
    fails = np.flatnonzero(p_test > delta)  # fixed-sequence testing: stop at the first non-rejection
    n_rej = int(fails[0]) if len(fails) else len(cand)
    full = _pair_stats(d, g, risk)
    cov_full = full.den / max(full.n, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        risk_full = np.where(full.den > 0, full.num / full.den, np.nan)
        err_full = np.where(full.den > 0, full.wrong / full.den, np.nan)
    if n_rej:
        rejected = cand[:n_rej]
        cov_t = (st.den / max(st.n, 1)).ravel()[rejected]
        best = rejected[np.argmax(cov_t)]
        i, j = np.unravel_index(best, (G, G))
        band = Band(float(g[i]) if i > 0 else None, float(g[j]) if j < G - 1 else None)
        figures = policy_figures(coverage=float(cov_full.ravel()[best]), risk=float(risk_full.ravel()[best]),
                                 error=float(err_full.ravel()[best]), testing_units=dt.n_units, candidates=len(cand),
                                 certified=n_rej)
        return PolicyFit((band,), True, len(d.s), nu, m, figures, rows_needed=None, units_needed=None,
                         note=f"{n_rej} of {len(cand)} candidate pairs certified on {dt.n_units} testing units.")
    rows, units, why = _needed(st, cand, alpha, delta, ordering_fraction, nu, len(d.s), len(dt.s))
    if rows is None and len(cand) < 3:  # too few rows for a path: forecast from every pair on all rows
        every = np.flatnonzero(tri.ravel() & (full.den.ravel() > 0))
        rows, units, why = _needed(full, every, alpha, delta, ordering_fraction, nu, len(d.s), len(d.s))
    figures = policy_figures(coverage=0.0, risk=math.nan, error=math.nan, testing_units=dt.n_units,
                             candidates=len(cand), certified=0)
    return PolicyFit((Band(None, None),), False, len(d.s), nu, m, figures, rows_needed=rows, units_needed=units, note=why)


def _needed(st: _PairStats, cand: npt.NDArray[np.int_], alpha: float, delta: float, frac: float, n_units: int, n_rows: int,
            n_test_rows: int) -> tuple[int | None, int | None, str]:
    """How many rows (and units) would certify a pair of the path at its observed rate on the testing units."""
    if not len(cand):
        return None, None, ("No pair of thresholds decides rows of the ordering slice with an observed rate "
                            f"below alpha = {alpha:g}; more rows will not help, a better judge (or a larger alpha) will.")
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(st.den > 0, st.num / np.maximum(st.den, 1), np.nan).ravel()[cand]
    cov = (st.den / max(n_test_rows, 1)).ravel()[cand]
    min_rows = min(MIN_FORECAST_ROWS, max(5, n_test_rows // 3))  # few testing rows: forecast from fewer
    enough = st.den.ravel()[cand] >= min_rows
    ok = enough & (rate < alpha)
    if not enough.any():
        return None, None, (f"Too few rows to certify or to forecast anything: no pair decides {min_rows} or more "
                            f"testing rows ({n_rows} rows in all). Score more rows.")
    if not ok.any():
        best = np.nanmin(np.where(enough, rate, np.nan)) if enough.any() else math.nan
        return None, None, (f"No pair on the tested path deciding at least {min_rows} testing rows has an "
                            f"observed rate below alpha = {alpha:g} (the lowest is {best:.3f}); more rows will not "
                            "help, a better judge (or a larger alpha) will.")
    best_rows, best_k = None, None
    for k in np.flatnonzero(ok):
        need = rows_needed(float(rate[k]), alpha, delta)
        if need is None:
            continue
        total = need / cov[k] / (1 - frac)
        if best_rows is None or total < best_rows:
            best_rows, best_k = total, k
    if best_rows is None:
        return None, None, "No pair could be certified with any number of rows."
    rows = int(math.ceil(best_rows))
    units = int(math.ceil(rows * n_units / max(n_rows, 1)))
    stopped = (" (fewer than here: the fixed sequence stopped at an earlier pair of the path; more rows "
               "make it reliable)" if rows <= n_rows else "")
    return rows, units, (
        f"Too few rows to certify any pair at alpha = {alpha:g}, delta = {delta:g}. The best pair on the tested "
        f"path decides {cov[best_k] * 100:.1f}% of the testing rows with an observed rate of {rate[best_k]:.3f}; at "
        f"that rate the binomial bound needs about {rows} rows ({units} units) in all, {1 - frac:.0%} of them for "
        f"testing, against {n_rows} here{stopped}."
    )


def _check_args(alpha: float, delta: float, risk: str, ordering_fraction: float) -> None:
    for name, v in (("alpha", alpha), ("delta", delta), ("ordering_fraction", ordering_fraction)):
        if not 0 < v < 1:
            raise JudgelabError(f"The {name!r} parameter of fit_policy must be in (0, 1). Got {v!r} instead.")
    if risk not in ("error", "false-pass"):
        raise JudgelabError(f"The 'risk' parameter of fit_policy must be 'error' or 'false-pass'. Got {risk!r} instead.")


@dataclass(frozen=True)
class LTTSettings:
    """What a Learn-then-Test policy fit guarantees and how it searches.

    ``risk`` among decided rows <= ``alpha`` with probability >= 1 - ``delta``
    (``mondrian``: also P(PASS | label 0) <= ``alpha``); ``ordering_fraction``
    of the units order the candidate pairs (seeded by ``seed``), the rest test
    them; ``max_grid`` candidate thresholds.
    """

    alpha: float = 0.1
    delta: float = 0.1
    risk: Risk = "error"
    mondrian: bool = False
    ordering_fraction: float = 0.3
    seed: int | None = 0
    max_grid: int = 64

    def check(self) -> None:
        _check_args(self.alpha, self.delta, self.risk, self.ordering_fraction)


def fit_arrays(s: ArrayLike | Sequence[float | None], y: ArrayLike, unit: ArrayLike | None = None, settings: LTTSettings | None = None) -> PolicyFit:
    """``fit_policy`` on plain arrays (scores, labels, unit ids; no unit ids: every row its own unit).

    ``settings`` is an ``LTTSettings`` (None: its defaults), as for
    ``fit_policy``: ``fit_arrays(s, y, settings=LTTSettings(alpha=0.05, seed=1))``.
    """
    cfg = options_or_default(LTTSettings, settings, "fit_arrays", name="settings", example="alpha=0.05")
    cfg.check()
    s = np.asarray(s, dtype=float)
    unit = np.arange(len(s)) if unit is None else unit
    return _fit(_as_units(s, y, unit), cfg)


def policy_decisions(lower: float | None, upper: float | None, scores: ArrayLike) -> npt.NDArray[np.object_]:
    """Vectorised ``Policy.decide``: an array of ``"pass"``/``"fail"``/``"abstain"`` (``cascade_decisions`` of one band)."""
    s = np.asarray(scores, dtype=float)
    decisions, _ = cascade_decisions([Band(lower, upper)], s.reshape(1, -1))
    return decisions.reshape(s.shape)
