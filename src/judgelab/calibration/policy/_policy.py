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
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from judgelab.calibration.policy._ltt import LTTSettings, PolicyFit, Risk, fit_arrays, policy_decisions
from judgelab.calibration._options import with_overrides
from judgelab.calibration.data import ScoreRecord, judge_values
from judgelab.textfiles import load_json_model, save_json_model
from judgelab.errors import DataError, PolicyMismatchError
from judgelab.evaluators import LTT_CITATION

__all__ = ["LTTSettings", "Policy", "PolicyFit", "Risk", "fit_and_save_policy", "fit_arrays", "fit_policy", "heldout_policy",
           "load_policy", "policy_decisions"]

logger = logging.getLogger(__name__)

Decision = Literal["pass", "fail", "abstain"]

METHOD = "learn-then-test/fixed-sequence"
CITATION = LTT_CITATION


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
        return save_json_model(self, path)


def load_policy(path: str | Path) -> Policy:
    """Read a ``policy.json`` written by ``fit_policy(...).save`` or ``judgelab policy``.

    Raises
    ------
    DataError
        If the file cannot be read or is not a policy.
    """
    return load_json_model(Policy, path, kind="policy", hint="Write one with 'judgelab policy RUN'.")


def _one_task(records: Sequence[ScoreRecord]) -> tuple[str, list[ScoreRecord]]:
    tasks = {r.task for r in records}
    if len(tasks) != 1:
        raise DataError(f"fit_policy takes one task's records; got {sorted(tasks) or 'none'}. Fit each task separately.")
    ok = [r for r in records if r.ok]
    if not ok:
        raise DataError("No row was scored successfully; no policy can be fitted.")
    return next(iter(tasks)), ok


def _identity(records: Sequence[ScoreRecord], field: str) -> str | None:
    values = judge_values(records, field)
    if len(values) > 1:
        raise DataError(f"The records mix {field}s {values}; fit a policy on the rows of one judge.")
    return values[0] if values else None


def fit_policy(
    records: Sequence[ScoreRecord],
    settings: LTTSettings | None = None,
    *,
    set_name: str | None = None,
    **overrides: Any,
) -> Policy:
    """Choose pass/fail/abstain thresholds whose risk among decided rows is <= ``alpha`` w.p. >= 1 - ``delta``.

    Parameters
    ----------
    records
        One task's scored records (``read_scores``); rows that failed to
        score are left out. Rows sharing ``fold_key`` (``meta["pair"]``) are
        one unit.
    settings, overrides
        An ``LTTSettings``, or its fields as keywords: ``alpha`` (the risk
        level), ``delta`` (the probability the guarantee may fail),
        ``risk`` (``"error"``: wrong decisions among decided rows;
        ``"false-pass"``: rows passed that should fail, among decided rows),
        ``mondrian`` (also bound ``P(PASS | label 0) <= alpha``),
        ``ordering_fraction`` (share of the units that order the candidate
        pairs, not tested on), ``seed`` (of that split) and ``max_grid``
        (most candidate thresholds).
    set_name
        Recorded in the policy.

    Returns
    -------
    Policy
        ``feasible=False`` (and ``rows_needed``) when no pair is certified.
    """
    cfg = with_overrides(LTTSettings, settings, overrides, "fit_policy")
    task, ok = _one_task(records)
    fit = fit_arrays([r.score for r in ok], [r.label for r in ok], [r.fold_key for r in ok], cfg)
    return _policy_from_fit(fit, ok, task, cfg, set_name)


def fit_and_save_policy(
    records: Sequence[ScoreRecord], path: str | Path, settings: LTTSettings | None = None, *,
    set_name: str | None = None, **overrides: Any,
) -> Policy:
    """``fit_policy`` plus its held-out check (``heldout_policy``), saved to ``path``: what
    ``judgelab policy`` and the report's Deployment section both write."""
    cfg = with_overrides(LTTSettings, settings, overrides, "fit_and_save_policy")
    policy = fit_policy(records, cfg, set_name=set_name)
    held = heldout_policy(records, alpha=cfg.alpha, delta=cfg.delta, risk=cfg.risk, mondrian=cfg.mondrian,
                          seed=cfg.seed)
    policy = policy.model_copy(update={"heldout": held})
    policy.save(path)
    return policy


def _policy_from_fit(fit: PolicyFit, ok: Sequence[ScoreRecord], task: str, cfg: LTTSettings,
                     set_name: str | None) -> Policy:
    def num(x):
        return None if isinstance(x, float) and math.isnan(x) else x

    return Policy(
        task=task, lower=fit.lower, upper=fit.upper, alpha=cfg.alpha, delta=cfg.delta, risk=cfg.risk,
        mondrian=cfg.mondrian, feasible=fit.feasible, n=fit.n, n_units=fit.n_units, unit_size=fit.unit_size,
        ordering_fraction=cfg.ordering_fraction, seed=cfg.seed,
        spec_hash=_identity(ok, "spec_hash"), template_hash=_identity(ok, "template_hash"),
        model=_identity(ok, "model"), evaluator=_identity(ok, "evaluator"), set=set_name,
        calibration={"coverage": fit.coverage, "risk": num(fit.risk_value), "error": num(fit.error),
                     "testing_units": fit.n_testing_units, "candidates": fit.n_candidates, "certified": fit.n_rejected},
        rows_needed=fit.rows_needed, units_needed=fit.units_needed, note=fit.note,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


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
    from judgelab.calibration.analysis import bootstrap_many
    from judgelab.calibration.analysis import split_plan

    _, ok = _one_task(records)
    s = np.array([r.score for r in ok], dtype=float)
    y = np.array([r.label for r in ok], dtype=int)
    units = np.array([r.fold_key for r in ok])
    splits = np.array([r.split or "" for r in ok])
    kw = dict(alpha=alpha, delta=delta, risk=risk, mondrian=mondrian, seed=seed)
    decisions = np.full(len(ok), "", dtype=object)
    plan = split_plan(y, splits, units, k_folds, seed)
    if plan.mode == "split":
        mode = "dev/test split"
        dev, test = plan.tune, plan.held
        fit = fit_arrays(s[dev], y[dev], units[dev], **kw)
        decisions[test] = policy_decisions(fit.lower, fit.upper, s[test])
    elif plan.folds is None:
        return None
    else:
        mode = f"{len(plan.folds)}-fold cross-fitting over units"
        for test_idx in plan.folds:
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
