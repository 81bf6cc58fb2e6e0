"""A pass/fail/abstain policy with a guaranteed error rate among decided rows.

Two thresholds: FAIL below ``lower``, PASS at or above ``upper``, ABSTAIN in
between. The thresholds are chosen with **Learn then Test** (Angelopoulos,
Bates, Candès, Jordan and Lei, 2021, arXiv:2110.01052): every candidate pair
``lambda = (lower, upper)`` is a null hypothesis ``H0_lambda: R(lambda) > alpha``;
a family-wise-error-controlling procedure rejects some of them at level
``delta``, and any rejected pair is safe:

    P( R(lambda_hat) <= alpha ) >= 1 - delta

over the draw of the calibration units, when calibration units and future
units are i.i.d. (exchangeable).

The risk ``R`` is a ratio of expectations over units: with ``risk="error"``
the share of wrong decisions among decided rows, with ``risk="false-pass"``
the share of decided rows that were passed but should have failed. A unit
is a set of rows that belong together (``meta["pair"]``, i.e.
``ScoreRecord.fold_key``, e.g. the right and the hallucinated answer to one
question); rows of one unit are not independent, so the unit is the sample:

- all units single rows: conditional on the number of decided rows, the
  wrong ones are Binomial(decided, R); the binomial tail is an exact p-value;
- larger units: per decided unit ``W = (wrong - alpha*decided)/m + alpha`` lies
  in [0, 1] (``m`` = the largest unit) and has mean <= alpha exactly when
  ``R <= alpha``; the Hoeffding-Bentkus p-value on the decided units tests it
  (see ``_risk_bounds``).

The family-wise control is **fixed-sequence testing** along an ordering
learned on a separate slice of the units (``ordering_fraction``, default 30%;
LTT, Section 4, on ordering multi-dimensional parameters with held-apart
data): the candidate thresholds are the ordering slice's score quantiles;
on that slice, a path of rising coverage is built (the lowest-risk pair in
each coverage band); on the remaining units the pairs are tested along the
path at level ``delta``, stopping at the first that is not rejected. The
grid and the path never see the testing units, so the family-wise error is
at most ``delta`` and every rejected pair is safe at once. Of the rejected
pairs the one deciding most testing rows is shipped.

``mondrian=True`` additionally requires the false-PASS rate within label 0,
``P(PASS | label 0) <= alpha``, tested on the label-0 rows alone (a
class-conditional, "Mondrian" guarantee that survives a change of the label
mix); a pair is safe only when both nulls are rejected (the larger of the
two p-values is a valid p-value for their union).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from judgelab.calibration._risk_bounds import betting_pvalue, binomial_pvalue, rows_needed
from judgelab.calibration._run import ScoreRecord
from judgelab.errors import DataError, JudgelabError, PolicyMismatchError

__all__ = ["Policy", "PolicyFit", "Risk", "fit_policy", "load_policy", "policy_decisions"]

logger = logging.getLogger(__name__)

Risk = Literal["error", "false-pass"]
Decision = Literal["pass", "fail", "abstain"]

METHOD = "learn-then-test/fixed-sequence"
CITATION = (
    "Angelopoulos, Bates, Candès, Jordan, Lei (2021). Learn then Test: Calibrating predictive "
    "algorithms to achieve risk control. arXiv:2110.01052"
)


class Policy(BaseModel):
    """A calibrated pass/fail/abstain policy, as saved in ``policy.json``.

    ``decide(score)`` is ``"fail"`` below ``lower``, ``"pass"`` at or above
    ``upper`` and ``"abstain"`` in between; a policy that is not
    ``feasible`` has no thresholds and abstains on every row.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    task: str
    lower: float | None
    upper: float | None
    alpha: float
    delta: float
    risk: Risk = "error"
    mondrian: bool = False
    feasible: bool
    n: int
    n_units: int
    unit_size: int
    method: str = METHOD
    citation: str = CITATION
    ordering_fraction: float = 0.3
    seed: int | None = 0
    spec_hash: str | None = None
    template_hash: str | None = None
    model: str | None = None
    evaluator: str | None = None
    set: str | None = None
    calibration: dict[str, float | int | None] = {}
    heldout: dict[str, Any] | None = None
    rows_needed: int | None = None
    units_needed: int | None = None
    note: str = ""
    created: str = ""

    def decide(self, score: float) -> Decision:
        """``"pass"``, ``"fail"`` or ``"abstain"`` for one score."""
        if self.lower is not None and score < self.lower:
            return "fail"
        if self.upper is not None and score >= self.upper:
            return "pass"
        return "abstain"

    def check(self, *, spec_hash: str | None, template_hash: str | None, where: str = "this judge") -> None:
        """Refuse a judge whose model spec or template differs from the one calibrated.

        Raises
        ------
        PolicyMismatchError
            Naming the policy's hashes and the judge's.
        """
        bad = [(name, want, have) for name, want, have in
               (("spec hash", self.spec_hash, spec_hash), ("template hash", self.template_hash, template_hash))
               if want is not None and want != have]
        if bad:
            diffs = "; ".join(f"policy {name} {want}, judge {name} {have}" for name, want, have in bad)
            raise PolicyMismatchError(
                f"The policy for task {self.task!r} (model {self.model or '?'}, set {self.set or '?'}) was calibrated "
                f"for another judge than {where}: {diffs}. Load the judge it was calibrated for, "
                "or calibrate a new policy for this one (judgelab policy RUN).",
                expected={"spec_hash": self.spec_hash, "template_hash": self.template_hash},
                actual={"spec_hash": spec_hash, "template_hash": template_hash},
            )

    def summary(self) -> dict[str, Any]:
        """What travels with every decision: thresholds, alpha, delta, n, risk."""
        return {"lower": self.lower, "upper": self.upper, "alpha": self.alpha, "delta": self.delta,
                "n": self.n, "risk": self.risk, "mondrian": self.mondrian, "feasible": self.feasible,
                "task": self.task}

    def describe(self) -> str:
        """One sentence for people."""
        if not self.feasible:
            return (f"No pair of thresholds keeps the {self.risk} rate <= {self.alpha:g} (with probability "
                    f">= {1 - self.delta:g}) on these {self.n} rows: the policy abstains on every row. {self.note}")
        cov = self.calibration.get("coverage")
        return (f"FAIL below {self.lower:.4f}, PASS at or above {self.upper:.4f}, ABSTAIN between: "
                f"{self.risk} rate among decided rows <= {self.alpha:g} with probability >= {1 - self.delta:g} "
                f"({self.method}, {self.n} rows in {self.n_units} units); decides "
                f"{(cov or 0) * 100:.1f}% of the calibration rows.")

    def save(self, path: str | Path) -> Path:
        """Write the policy as JSON; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        return path


def load_policy(path: str | Path) -> Policy:
    """Read a ``policy.json`` written by ``fit_policy(...).save`` or ``judgelab policy``.

    Raises
    ------
    DataError
        If the file cannot be read or is not a policy.
    """
    path = Path(path)
    try:
        return Policy.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"Cannot read policy file {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise DataError(f"{path} is not a judgelab policy (field {field!r}: {err.get('msg')}). "
                        "Write one with 'judgelab policy RUN'.", path=str(path), field=field) from exc


# -- the arrays the test works on ---------------------------------------------------------------


@dataclass(frozen=True)
class _Units:
    s: np.ndarray  # scores
    y: np.ndarray  # labels 0/1
    unit: np.ndarray  # unit code per row, 0..n_units-1

    @property
    def n_units(self) -> int:
        return int(self.unit.max()) + 1 if len(self.unit) else 0

    def subset(self, units: np.ndarray) -> "_Units":
        keep = np.isin(self.unit, units)
        _, codes = np.unique(self.unit[keep], return_inverse=True)
        return _Units(self.s[keep], self.y[keep], codes.astype(int))


def _as_units(s, y, unit) -> _Units:
    s = np.asarray(s, dtype=float)
    y = np.asarray(y).astype(int)
    _, codes = np.unique(np.asarray(unit), return_inverse=True)
    return _Units(s, y, codes.astype(int))


@dataclass(frozen=True)
class _PairStats:
    """Counts for every (lower=g[i], upper=g[j]) pair, i <= j (G x G arrays)."""

    num: np.ndarray
    den: np.ndarray
    dec_units: np.ndarray
    wrong: np.ndarray
    false_pass: np.ndarray
    n: int
    n0: int
    n0_units: int


def _pair_stats(d: _Units, g: np.ndarray, risk: str) -> _PairStats:
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


def _decided_units(d: _Units, g: np.ndarray) -> np.ndarray:
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


def _unit_size(unit: np.ndarray, mask: np.ndarray | None = None) -> int:
    u = unit if mask is None else unit[mask]
    return int(np.bincount(u).max()) if len(u) else 1


def _grid_pvalues(st: _PairStats, alpha: float, mondrian: bool) -> np.ndarray:
    """Exact binomial p-values for every pair when every unit is one row."""
    p = binomial_pvalue(st.num, st.den, alpha)
    if mondrian:
        p = np.maximum(p, binomial_pvalue(st.false_pass, np.full_like(st.den, st.n0), alpha))
    return p


def _unit_pvalue(d: _Units, lower: float, upper: float, *, alpha: float, delta: float, risk: str,
                 mondrian: bool, m: int, m0: int, order: np.ndarray) -> float:
    """Betting p-value on units of several rows for one pair (see ``_risk_bounds``)."""
    fail, pas = d.s < lower, d.s >= upper
    false_pass = pas & (d.y == 0)
    bad = false_pass | (fail & (d.y == 1)) if risk == "error" else false_pass
    nu = d.n_units

    def p_of(num_rows, den_rows, size):
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


def _sequence(so: _PairStats, tri, cov_o, n_test_rows: float, m: int) -> np.ndarray:
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


def _grid(s: np.ndarray, max_grid: int) -> np.ndarray:
    inner = np.unique(np.quantile(s, np.linspace(0, 1, max(2, max_grid - 2)))) if len(s) else np.empty(0)
    top = max(1.0, float(s.max()) if len(s) else 1.0) + 1e-9
    return np.unique(np.r_[0.0, inner, top])


# -- fitting -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyFit:
    """What ``fit_policy`` found: the thresholds and the numbers behind them."""

    lower: float | None
    upper: float | None
    feasible: bool
    n: int
    n_units: int
    unit_size: int
    n_testing_units: int
    n_candidates: int
    n_rejected: int
    coverage: float  # on all calibration rows
    risk_value: float  # the risk on all calibration rows
    error: float
    rows_needed: int | None
    units_needed: int | None
    note: str


def _fit(d: _Units, *, alpha: float, delta: float, risk: str, mondrian: bool,
         ordering_fraction: float, seed: int | None, max_grid: int) -> PolicyFit:
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
            p_test[k] = _unit_pvalue(dt, g[i], g[j], alpha=alpha, delta=delta, risk=risk, mondrian=mondrian,
                                     m=m, m0=m0, order=unit_order)
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
        return PolicyFit(float(g[i]) if i > 0 else None, float(g[j]) if j < G - 1 else None, True, len(d.s), nu, m,
                         dt.n_units, len(cand), n_rej, float(cov_full.ravel()[best]),
                         float(risk_full.ravel()[best]), float(err_full.ravel()[best]), None, None,
                         f"{n_rej} of {len(cand)} candidate pairs certified on {dt.n_units} testing units.")
    rows, units, why = _needed(st, cand, alpha, delta, ordering_fraction, nu, len(d.s), len(dt.s))
    if rows is None and len(cand) < 3:  # too few rows for a path: forecast from every pair on all rows
        every = np.flatnonzero(tri.ravel() & (full.den.ravel() > 0))
        rows, units, why = _needed(full, every, alpha, delta, ordering_fraction, nu, len(d.s), len(d.s))
    return PolicyFit(None, None, False, len(d.s), nu, m, dt.n_units, len(cand), 0, 0.0, math.nan, math.nan,
                     rows, units, why)


def _needed(st: _PairStats, cand: np.ndarray, alpha, delta, frac, n_units, n_rows, n_test_rows):
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


def fit_arrays(s, y, unit=None, *, alpha: float = 0.1, delta: float = 0.1, risk: Risk = "error",
               mondrian: bool = False, ordering_fraction: float = 0.3, seed: int | None = 0,
               max_grid: int = 64) -> PolicyFit:
    """``fit_policy`` on plain arrays (scores, labels, unit ids; no unit ids: every row its own unit)."""
    _check_args(alpha, delta, risk, ordering_fraction)
    s = np.asarray(s, dtype=float)
    unit = np.arange(len(s)) if unit is None else unit
    return _fit(_as_units(s, y, unit), alpha=alpha, delta=delta, risk=risk, mondrian=mondrian,
                ordering_fraction=ordering_fraction, seed=seed, max_grid=max_grid)


def _one_task(records: Sequence[ScoreRecord]) -> tuple[str, list[ScoreRecord]]:
    tasks = {r.task for r in records}
    if len(tasks) != 1:
        raise DataError(f"fit_policy takes one task's records; got {sorted(tasks) or 'none'}. Fit each task separately.")
    ok = [r for r in records if r.ok]
    if not ok:
        raise DataError("No row was scored successfully; no policy can be fitted.")
    return next(iter(tasks)), ok


def _identity(records: Sequence[ScoreRecord], field: str) -> str | None:
    values = sorted({str(getattr(r, field, None) or (r.model_extra or {}).get(field) or "") for r in records} - {""})
    if len(values) > 1:
        raise DataError(f"The records mix {field}s {values}; fit a policy on the rows of one judge.")
    return values[0] if values else None


def fit_policy(
    records: Sequence[ScoreRecord],
    *,
    alpha: float = 0.1,
    delta: float = 0.1,
    risk: Risk = "error",
    mondrian: bool = False,
    ordering_fraction: float = 0.3,
    seed: int | None = 0,
    max_grid: int = 64,
    set_name: str | None = None,
) -> Policy:
    """Choose pass/fail/abstain thresholds whose risk among decided rows is <= ``alpha`` w.p. >= 1 - ``delta``.

    Parameters
    ----------
    records
        One task's scored records (``read_scores``); rows that failed to
        score are left out. Rows sharing ``fold_key`` (``meta["pair"]``) are
        one unit.
    alpha
        The risk level, in (0, 1).
    delta
        The probability the guarantee may fail, in (0, 1).
    risk
        ``"error"``: wrong decisions among decided rows; ``"false-pass"``:
        rows passed that should fail, among decided rows.
    mondrian
        Also bound ``P(PASS | label 0) <= alpha`` on the label-0 rows.
    ordering_fraction
        Share of the units used to order the candidate pairs (not tested on).
    seed
        Seed of the ordering/testing split of the units.
    max_grid
        Most candidate thresholds (quantiles of the ordering slice's scores).
    set_name
        Recorded in the policy.

    Returns
    -------
    Policy
        ``feasible=False`` (and ``rows_needed``) when no pair is certified.
    """
    task, ok = _one_task(records)
    fit = fit_arrays([r.score for r in ok], [r.label for r in ok], [r.fold_key for r in ok], alpha=alpha,
                     delta=delta, risk=risk, mondrian=mondrian, ordering_fraction=ordering_fraction, seed=seed,
                     max_grid=max_grid)
    return _policy_from_fit(fit, ok, task=task, alpha=alpha, delta=delta, risk=risk, mondrian=mondrian,
                            ordering_fraction=ordering_fraction, seed=seed, set_name=set_name)


def _policy_from_fit(fit: PolicyFit, ok, *, task, alpha, delta, risk, mondrian, ordering_fraction, seed, set_name) -> Policy:
    def num(x):
        return None if isinstance(x, float) and math.isnan(x) else x

    return Policy(
        task=task, lower=fit.lower, upper=fit.upper, alpha=alpha, delta=delta, risk=risk, mondrian=mondrian,
        feasible=fit.feasible, n=fit.n, n_units=fit.n_units, unit_size=fit.unit_size,
        ordering_fraction=ordering_fraction, seed=seed,
        spec_hash=_identity(ok, "spec_hash"), template_hash=_identity(ok, "template_hash"),
        model=_identity(ok, "model"), evaluator=_identity(ok, "evaluator"), set=set_name,
        calibration={"coverage": fit.coverage, "risk": num(fit.risk_value), "error": num(fit.error),
                     "testing_units": fit.n_testing_units, "candidates": fit.n_candidates, "certified": fit.n_rejected},
        rows_needed=fit.rows_needed, units_needed=fit.units_needed, note=fit.note,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


def policy_decisions(lower: float | None, upper: float | None, scores) -> np.ndarray:
    """Vectorised ``Policy.decide``: an array of ``"pass"``/``"fail"``/``"abstain"``."""
    s = np.asarray(scores, dtype=float)
    out = np.full(s.shape, "abstain", dtype=object)
    if upper is not None:
        out[s >= upper] = "pass"
    if lower is not None:
        out[s < lower] = "fail"
    return out


def heldout_policy(
    records: Sequence[ScoreRecord],
    *,
    alpha: float = 0.1,
    delta: float = 0.1,
    risk: Risk = "error",
    mondrian: bool = False,
    seed: int | None = 0,
    k_folds: int = 5,
    n_resamples: int = 1000,
) -> dict[str, Any] | None:
    """Coverage and realised risk of the policy on rows it was not fitted on, with 95% intervals.

    With a dev/test split in the records the policy is fitted on ``dev`` and
    applied to ``test``; otherwise by k-fold cross-fitting over units (each
    fold's rows are decided by a policy fitted on the other folds). Intervals
    are cluster-bootstrap intervals over units. ``None`` when there are too
    few units for either.
    """
    from judgelab.calibration._analysis import _folds
    from judgelab.calibration._bootstrap import bootstrap_many

    _, ok = _one_task(records)
    s = np.array([r.score for r in ok], dtype=float)
    y = np.array([r.label for r in ok], dtype=int)
    units = np.array([r.fold_key for r in ok])
    splits = np.array([r.split or "" for r in ok])
    kw = dict(alpha=alpha, delta=delta, risk=risk, mondrian=mondrian, seed=seed)
    decisions = np.full(len(ok), "", dtype=object)
    if (splits == "dev").any() and (splits == "test").any():
        mode = "dev/test split"
        dev, test = splits == "dev", splits == "test"
        fit = fit_arrays(s[dev], y[dev], units[dev], **kw)
        decisions[test] = policy_decisions(fit.lower, fit.upper, s[test])
    else:
        folds = _folds(y, units, k_folds, seed)
        if folds is None:
            return None
        mode = f"{len(folds)}-fold cross-fitting over units"
        for test_idx in folds:
            train = np.ones(len(ok), dtype=bool)
            train[test_idx] = False
            fit = fit_arrays(s[train], y[train], units[train], **kw)
            decisions[test_idx] = policy_decisions(fit.lower, fit.upper, s[test_idx])
    held = decisions != ""
    d, yh, uh = decisions[held], y[held], units[held]
    decided = (d != "abstain").astype(float)
    false_pass = ((d == "pass") & (yh == 0)).astype(float)
    wrong = (false_pass + ((d == "fail") & (yh == 1))).astype(float)
    bad = wrong if risk == "error" else false_pass

    def stat(dec, bad, wrong):
        n_dec = dec.sum()
        return {"coverage": dec.mean(), "risk": bad.sum() / n_dec if n_dec else math.nan,
                "error": wrong.sum() / n_dec if n_dec else math.nan}

    ivs = bootstrap_many(stat, [decided, bad, wrong], n_resamples=n_resamples, seed=seed,
                         clusters=uh if len(set(uh)) < len(uh) else None)
    out: dict[str, Any] = {"mode": mode, "n": int(held.sum()), "decided": int(decided.sum())}
    for k, iv in ivs.items():
        out[k] = iv.to_dict()
        out[f"{k}_text"] = format(iv)
    return out
