"""Learn then Test over a whole cascade of judges: the arrays, the path, the test and the fit.

A cascade of ``K`` stages has one band per stage: stage ``k`` FAILs a row
whose score is below its ``lower``, PASSes one at or above its ``upper``
and escalates the rest to stage ``k + 1``; the last stage's band is a
pass/fail/abstain policy. A configuration ``lambda`` is the tuple of all
bands, and its risk ``R(lambda)`` is the error of the *joint* decision
among the rows the cascade decides (at whichever stage). As in
``_policy`` (see its docstring), every configuration is a null
``H0_lambda: R(lambda) > alpha``; the candidates are ordered on a held-apart
ordering slice of the units and tested by fixed-sequence testing at level
``delta`` on the rest, with the binomial tail p-value (units of one row) or
the betting p-value (units of several rows) of ``_risk_bounds``. Every
rejected configuration is safe at once, so the one shipped may be chosen
freely among them: the one of least expected cost on the testing slice.

The cost of a row is the cost of every stage it reached (tokens, or the
``costs`` given) plus ``abstain_cost`` when the cascade abstains (a person
looks at it). Without an abstain cost the cheapest safe cascade would be
one that abstains on everything after the first stage; the default prices
an abstention at ``ABSTAIN_COST_FACTOR`` times a row that reaches every
stage, so coverage comes first and the token cost decides between
cascades of (nearly) equal coverage.

The ordering path is the ordering slice's cost/risk frontier, walked from
the dearest configuration (that decides about ``START_ROWS`` testing rows)
to the cheapest: along it the cost falls and the risk rises, so the test
stops near the cheapest configuration whose risk is below alpha.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.calibration.policy._fit_result import CascadeFit, PolicyFit, cascade_figures
from judgelab.calibration.policy._ltt import MIN_FORECAST_ROWS, START_ROWS, _grid
from judgelab.calibration.policy._risk_bounds import betting_pvalue, binomial_pvalue, rows_needed
from judgelab.errors import ParameterError
from judgelab.evaluators import Band, cascade_decisions

__all__ = ["ABSTAIN_COST_FACTOR", "CascadeFit", "CascadeFitOptions", "cascade_decisions", "fit_cascade_arrays"]

ABSTAIN_COST_FACTOR = 10.0
"""Default cost of an abstention: this many times the cost of a row that reaches every stage."""
MAX_PREFIXES = 1500
"""Most band combinations of the stages before the last (the grids of early stages shrink to fit)."""


@dataclass(frozen=True)
class CascadeFitOptions:
    """How a cascade is fitted.

    Attributes
    ----------
    alpha, delta
        The error level among decided rows, and the probability the guarantee may fail.
    costs
        Cost of one row at each stage (``None``: one per stage).
    abstain_cost
        Cost of an abstention (``None``: ``ABSTAIN_COST_FACTOR * sum(costs)``).
    ordering_fraction
        Share of the units that orders the candidates (never tested on).
    seed
        Seed of the ordering/testing split.
    max_grid
        Most candidate thresholds of the last stage (quantiles of the ordering slice).
    """

    alpha: float = 0.1
    delta: float = 0.1
    costs: tuple[float, ...] | None = None
    abstain_cost: float | None = None
    ordering_fraction: float = 0.3
    seed: int | None = 0
    max_grid: int = 24

    def __post_init__(self) -> None:
        for name in ("alpha", "delta", "ordering_fraction"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise ParameterError(f"The {name!r} parameter of fit_cascade must be in (0, 1). Got {v!r} instead.")
        if self.costs is not None and any(not (c >= 0) for c in self.costs):
            raise ParameterError(f"The 'costs' of fit_cascade must be >= 0. Got {self.costs!r} instead.")
        if self.max_grid < 3:
            raise ParameterError(f"The 'max_grid' parameter of fit_cascade must be >= 3. Got {self.max_grid!r} instead.")

    def stage_costs(self, k: int) -> npt.NDArray[np.float64]:
        if self.costs is None:
            return np.ones(k)
        if len(self.costs) != k:
            raise ParameterError(f"fit_cascade got {len(self.costs)} costs for {k} stages; give one cost per stage.")
        return np.asarray(self.costs, dtype=float)

    def abstain(self, costs: npt.NDArray[np.float64]) -> float:
        return float(self.abstain_cost) if self.abstain_cost is not None else ABSTAIN_COST_FACTOR * float(costs.sum())


# -- counts for every configuration of a slice ---------------------------------------------------


@dataclass(frozen=True)
class _Slice:
    s: npt.NDArray[np.float64]  # (K, n)
    y: npt.NDArray[np.int_]  # (n,)
    unit: npt.NDArray[np.int_]  # (n,) codes 0..n_units-1

    @property
    def n(self) -> int:
        return int(self.s.shape[1])


@dataclass(frozen=True)
class _Configs:
    """The candidate configurations: each a prefix (bands of stages 0..K-2) and a last-stage pair."""

    grids: tuple[npt.NDArray[np.float64], ...]
    prefixes: tuple[tuple[int, ...], ...]  # pair indices per early stage
    pairs: tuple[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]], ...]  # (i, j) of every pair, per stage

    @property
    def n_last(self) -> int:
        return len(self.pairs[-1][0])

    def bands(self, c: int) -> tuple[Band, ...]:
        p, q = divmod(int(c), self.n_last)
        idx = (*self.prefixes[p], q)
        out = []
        for k, t in enumerate(idx):
            g, (ii, jj) = self.grids[k], self.pairs[k]
            i, j = ii[t], jj[t]
            out.append(Band(float(g[i]) if i > 0 else None, float(g[j]) if j < len(g) - 1 else None))
        return tuple(out)


def _stage_grid_size(k: int, n_stages: int, max_grid: int) -> int:
    if k == n_stages - 1:
        return max_grid
    per_stage = MAX_PREFIXES ** (1 / max(n_stages - 1, 1))  # pairs per early stage
    return int(max(3, min(max_grid, math.floor((math.sqrt(8 * per_stage + 1) - 1) / 2))))


def _configs(order: _Slice, max_grid: int) -> _Configs:
    K = order.s.shape[0]
    grids = tuple(_coarse(_grid(order.s[k], max_grid), _stage_grid_size(k, K, max_grid)) for k in range(K))
    pairs = tuple(np.triu_indices(len(g)) for g in grids)
    prefixes = tuple(itertools.product(*(range(len(pairs[k][0])) for k in range(K - 1))))
    return _Configs(grids, prefixes, pairs)


def _coarse(g: npt.NDArray[np.float64], size: int) -> npt.NDArray[np.float64]:
    if len(g) <= size:
        return g
    keep = np.unique(np.round(np.linspace(0, len(g) - 1, size)).astype(int))
    out: npt.NDArray[np.float64] = g[keep]
    return out


@dataclass(frozen=True)
class _Stats:
    wrong: npt.NDArray[np.float64]  # (C,)
    decided: npt.NDArray[np.float64]  # (C,)
    cost: npt.NDArray[np.float64]  # (C,) total stage cost + abstain cost
    n: int


def _slice_stats(d: _Slice, cf: _Configs, costs: npt.NDArray[np.float64], abstain_cost: float) -> _Stats:
    """Wrong rows, decided rows and cost of every configuration on a slice, all at once.

    The early stages' bands combine into one escalation mask per prefix
    (``prefixes x rows``); the last stage's counts for every pair are then
    cumulative sums of the rows below each threshold (as in
    ``_ltt._pair_stats``), taken for all prefixes by one matrix product.
    """
    K, n = d.s.shape
    y = d.y.astype(float)
    masks = np.ones((1, n), dtype=bool)
    wrong0, cost0 = np.zeros(1), np.zeros(1)
    for k in range(K - 1):
        g, (ii, jj) = cf.grids[k], cf.pairs[k]
        fail, pas = d.s[k][None, :] < g[ii][:, None], d.s[k][None, :] >= g[jj][:, None]
        esc = ~fail & ~pas
        bad = ((fail & (d.y == 1)) | (pas & ~fail & (d.y == 0))).astype(float)
        reach = masks.sum(axis=1).astype(float)
        cost0 = (cost0 + costs[k] * reach)[:, None].repeat(len(ii), axis=1).ravel()
        wrong0 = (wrong0[:, None] + masks.astype(float) @ bad.T).ravel()
        masks = (masks[:, None, :] & esc[None, :, :]).reshape(-1, n)
    g = cf.grids[-1]
    G = len(g)
    onehot = np.zeros((n, G + 1))
    onehot[np.arange(n), np.searchsorted(g, d.s[-1], side="right")] = 1.0  # score < g[i]  <=>  bin <= i
    m = masks.astype(float)
    below = np.cumsum(m @ onehot, axis=1)[:, :G]
    pos_below = np.cumsum(m @ (onehot * y[:, None]), axis=1)[:, :G]
    reach = m.sum(axis=1)[:, None]
    neg_reach = reach - (m @ y)[:, None]
    iu, ju = cf.pairs[-1]
    wrong_last = pos_below[:, iu] + neg_reach - (below[:, ju] - pos_below[:, ju])
    dec_last = below[:, iu] + reach - below[:, ju]
    wrong = (wrong0[:, None] + wrong_last).ravel()
    decided = ((n - reach) + dec_last).ravel()
    cost = (cost0[:, None] + costs[-1] * reach + abstain_cost * (reach - dec_last)).ravel()
    return _Stats(wrong, decided, cost, n)


# -- ordering, testing, choosing ----------------------------------------------------------------


def _sequence(so: _Stats, n_test_rows: float, m: int) -> npt.NDArray[np.int_]:
    """Candidates to test, in order: the ordering slice's cost/risk frontier, from dear (safe) to cheap.

    Of the configurations deciding about ``START_ROWS`` testing rows (x the
    unit size) or more, a configuration is on the frontier when every
    cheaper one has a higher risk on the ordering slice. Walking it from
    the dearest, the risk rises and the cost falls, so fixed-sequence
    testing stops near the cheapest configuration whose risk is below
    alpha. (Fixed-sequence testing spends nothing per test: a long path
    costs no power, only its order matters.)
    """
    start = min(1.0, START_ROWS * max(m, 1) / max(n_test_rows, 1.0))
    cov = so.decided / max(so.n, 1)
    valid = np.flatnonzero((so.decided > 0) & (cov >= start - 1e-12))
    if not len(valid):
        return np.empty(0, dtype=int)
    rate = so.wrong[valid] / so.decided[valid]
    cost = so.cost[valid]
    order = valid[np.lexsort((-so.decided[valid], rate, cost))]  # cheapest first; ties: lower risk, more decided
    frontier, best = [], np.inf
    for c in order:
        r = so.wrong[c] / so.decided[c]
        if r < best - 1e-12:
            frontier.append(int(c))
            best = r
    return np.array(frontier[::-1], dtype=int)


def _pvalues(dt: _Slice, st: _Stats, cf: _Configs, cand: npt.NDArray[np.int_], opts: CascadeFitOptions,
             rng: np.random.Generator) -> npt.NDArray[np.float64]:
    m = int(np.bincount(dt.unit).max()) if dt.n else 1
    if m <= 1:
        return binomial_pvalue(st.wrong[cand], st.decided[cand], opts.alpha)
    p = np.ones(len(cand))
    order = rng.permutation(int(dt.unit.max()) + 1)
    for k, c in enumerate(cand):  # fixed sequence: stop at the first configuration not rejected
        dec, _ = cascade_decisions(cf.bands(c), dt.s)
        decided = dec != "abstain"
        wrong = ((dec == "pass") & (dt.y == 0)) | ((dec == "fail") & (dt.y == 1))
        num = np.bincount(dt.unit, wrong.astype(float))[order]
        den = np.bincount(dt.unit, decided.astype(float))[order]
        keep = den > 0
        p[k] = betting_pvalue((num[keep] - opts.alpha * den[keep]) / m + opts.alpha, opts.alpha, opts.delta)
        if p[k] > opts.delta:
            break
    return p


def _split(d: _Slice, frac: float, rng: np.random.Generator) -> tuple[_Slice, _Slice]:
    nu = int(d.unit.max()) + 1 if d.n else 0
    perm = rng.permutation(nu)
    n_order = min(max(int(round(frac * nu)), 1), nu - 1) if nu >= 2 else 0
    return _subset(d, perm[:n_order]), _subset(d, perm[n_order:])


def _subset(d: _Slice, units: npt.NDArray[np.int64]) -> _Slice:
    keep = np.isin(d.unit, units)
    _, codes = np.unique(d.unit[keep], return_inverse=True)
    return _Slice(d.s[:, keep], d.y[keep], codes.astype(int))


def _summary(bands: Sequence[Band], d: _Slice, costs: npt.NDArray[np.float64]) -> tuple[float, float, float, tuple[float, ...]]:
    dec, stage = cascade_decisions(bands, d.s)
    decided = dec != "abstain"
    wrong = ((dec == "pass") & (d.y == 0)) | ((dec == "fail") & (d.y == 1))
    reached = np.ones(d.n)
    cost = np.zeros(d.n)
    for k in range(d.s.shape[0]):
        cost += costs[k] * reached
        reached = reached * ~((stage == k) & decided)
    n = max(d.n, 1)
    err = float(wrong.sum() / decided.sum()) if decided.any() else math.nan
    share = tuple(float(((stage == k) & decided).sum() / n) for k in range(d.s.shape[0]))
    return float(decided.mean()) if d.n else 0.0, err, float(cost.sum() / n), share


def _forecast(st: _Stats, cand: npt.NDArray[np.int_], opts: CascadeFitOptions, n_units: int, n_rows: int
              ) -> tuple[int | None, int | None, str]:
    """Rows (and units) that would certify a configuration of the path at its observed testing rate."""
    if not len(cand):
        return None, None, (f"No configuration decides enough rows of the ordering slice; with {n_rows} rows "
                            "nothing can be tested. Score more rows.")
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(st.decided[cand] > 0, st.wrong[cand] / st.decided[cand], np.nan)
    cov = st.decided[cand] / max(st.n, 1)
    min_rows = min(MIN_FORECAST_ROWS, max(5, st.n // 3))
    ok = (st.decided[cand] >= min_rows) & (rate < opts.alpha)
    best: tuple[float, int] | None = None
    for k in np.flatnonzero(ok):
        need = rows_needed(float(rate[k]), opts.alpha, opts.delta)
        if need is None:
            continue
        total = need / cov[k] / (1 - opts.ordering_fraction)
        if best is None or total < best[0]:
            best = (total, int(k))
    if best is None:
        low = np.nanmin(rate) if np.isfinite(rate).any() else math.nan
        return None, None, (f"No configuration on the tested path has an observed testing error below alpha = "
                            f"{opts.alpha:g} (the lowest is {low:.3f}); more rows will not help, better judges "
                            "(or a larger alpha) will.")
    rows = int(math.ceil(best[0]))
    units = int(math.ceil(rows * n_units / max(n_rows, 1)))
    kb = best[1]
    return rows, units, (f"Too few rows to certify any cascade at alpha = {opts.alpha:g}, delta = {opts.delta:g}. "
                         f"The best configuration on the tested path decides {cov[kb] * 100:.1f}% of the testing rows "
                         f"with an observed error of {rate[kb]:.3f}; at that rate the binomial bound needs about "
                         f"{rows} rows ({units} units) in all, against {n_rows} here.")


def fit_cascade_arrays(scores: ArrayLike, labels: ArrayLike, units: ArrayLike | None = None, options: CascadeFitOptions | None = None) -> PolicyFit:
    """Fit every stage's band jointly: the cascade's error among decided rows is <= alpha w.p. >= 1 - delta.

    Parameters
    ----------
    scores
        ``(n_stages, n_rows)``: every stage's score of every row (the same rows).
    labels
        ``(n_rows,)`` labels, 1 = should pass.
    units
        Unit id of every row (rows of one unit are one sample); ``None``: every row is its own unit.
    options
        ``CascadeFitOptions`` (alpha, delta, costs...).

    Returns
    -------
    PolicyFit
        ``feasible=False`` (bands that abstain on every row, and ``rows_needed``) when nothing is certified.
    """
    opts = options or CascadeFitOptions()
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    y = np.asarray(labels).astype(int)
    if s.shape[0] == 0:
        raise ParameterError("fit_cascade_arrays needs at least one stage's scores; got none.")
    if s.shape[1] != len(y):
        raise ParameterError(f"fit_cascade_arrays got {s.shape[1]} scores per stage for {len(y)} labels.")
    K = s.shape[0]
    costs = opts.stage_costs(K)
    abstain_cost = opts.abstain(costs)
    _, codes = np.unique(np.arange(len(y)) if units is None else np.asarray(units), return_inverse=True)
    d = _Slice(s, y, codes.astype(int))
    nu = int(codes.max()) + 1 if len(codes) else 0
    m = int(np.bincount(codes).max()) if len(codes) else 1
    if nu < 2:  # nothing to test on once a unit orders the candidates
        why = (f"A cascade fit needs at least 2 units (one orders the candidates, the others test them); got {d.n} "
               f"rows in {nu} unit{'s' if nu != 1 else ''}. Score more units.")
        return _nothing_certified(d, costs, nu, m, rows=None, units=None, why=why)
    rng = np.random.default_rng(opts.seed)
    do, dt = _split(d, opts.ordering_fraction, rng)
    cf = _configs(do, opts.max_grid)
    so, st = _slice_stats(do, cf, costs, abstain_cost), _slice_stats(dt, cf, costs, abstain_cost)
    cand = _sequence(so, dt.n, m)
    p = _pvalues(dt, st, cf, cand, opts, rng) if len(cand) else np.empty(0)
    fails = np.flatnonzero(p > opts.delta)
    n_rej = int(fails[0]) if len(fails) else len(cand)
    n_test_units = int(dt.unit.max()) + 1 if dt.n else 0
    if n_rej:
        rejected = cand[:n_rej]
        best = rejected[np.lexsort((-st.decided[rejected], st.cost[rejected]))[0]]
        bands = cf.bands(best)
        cov, err, cost, share = _summary(bands, d, costs)
        figures = cascade_figures(coverage=cov, error=err, cost=cost, decided_share=share, testing_units=n_test_units,
                                  candidates=len(cand), certified=n_rej)
        return PolicyFit(bands, True, d.n, nu, m, figures, rows_needed=None, units_needed=None,
                         note=f"{n_rej} of {len(cand)} candidate cascades certified on {n_test_units} testing units.")
    rows, units_needed, why = _forecast(st, cand, opts, nu, d.n)
    return _nothing_certified(d, costs, nu, m, tested=(n_test_units, len(cand)), rows=rows, units=units_needed, why=why)


def _nothing_certified(d: _Slice, costs: npt.NDArray[np.float64], nu: int, m: int, *, tested: tuple[int, int] = (0, 0),
                       rows: int | None, units: int | None, why: str) -> PolicyFit:
    """The fit when no cascade is certified: every stage abstains on every row, with why and what would help.

    ``tested`` is (testing units, candidates tested).
    """
    n_test_units, n_tested = tested
    K = d.s.shape[0]
    bands = tuple(Band(None, None) for _ in range(K))
    _, _, cost, _ = _summary(bands, d, costs)
    figures = cascade_figures(coverage=0.0, error=math.nan, cost=cost, decided_share=tuple(0.0 for _ in range(K)),
                              testing_units=n_test_units, candidates=n_tested, certified=0)
    return PolicyFit(bands, False, d.n, nu, m, figures, rows_needed=rows, units_needed=units, note=why)
