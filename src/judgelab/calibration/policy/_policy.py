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
is a set of rows that belong together (``ScoreRecord.unit``, from the
file's ``meta["pair"]``, e.g. the right and the hallucinated answer to one
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
import time
from collections.abc import Sequence

from judgelab.calibration._options import options_or_default
from judgelab.calibration.data import ScoreRecord, judge_values
from judgelab.calibration.policy._fit_result import PolicyFit
from judgelab.calibration.policy._ltt import LTTSettings, Risk, fit_arrays, policy_decisions
from judgelab.errors import DataError
from judgelab.evaluators import POLICY_METHOD, Policy, Stage, load_policy, one_stage_name

__all__ = ["LTTSettings", "Policy", "PolicyFit", "Risk", "fit_arrays", "fit_policy", "load_policy", "one_task",
           "policy_decisions"]

logger = logging.getLogger(__name__)

METHOD = POLICY_METHOD


def one_task(records: Sequence[ScoreRecord]) -> tuple[str, list[ScoreRecord]]:
    """The task of one task's records and its rows that scored; ``DataError`` for several tasks or none scored."""
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
) -> Policy:
    """Choose pass/fail/abstain thresholds whose risk among decided rows is <= ``alpha`` w.p. >= 1 - ``delta``.

    Parameters
    ----------
    records
        One task's scored records (``read_scores``); rows that failed to
        score are left out. Rows sharing ``unit`` (``meta["pair"]`` in the
        file) are one unit.
    settings
        An ``LTTSettings`` (None: its defaults): ``alpha`` (the risk
        level), ``delta`` (the probability the guarantee may fail),
        ``risk`` (``"error"``: wrong decisions among decided rows;
        ``"false-pass"``: rows passed that should fail, among decided rows),
        ``mondrian`` (also bound ``P(PASS | label 0) <= alpha``),
        ``ordering_fraction`` (share of the units that order the candidate
        pairs, not tested on), ``seed`` (of that split) and ``max_grid``
        (most candidate thresholds): ``fit_policy(records, LTTSettings(alpha=0.05))``.
    set_name
        Recorded in the policy.

    Returns
    -------
    Policy
        A one-stage policy; ``feasible=False`` (and ``rows_needed``) when no pair is certified.
    """
    cfg = options_or_default(LTTSettings, settings, "fit_policy", name="settings", example="alpha=0.05")
    task, ok = one_task(records)
    fit = fit_arrays([r.score for r in ok], [r.label for r in ok], [r.unit for r in ok], cfg)
    return _policy_from_fit(fit, ok, task, cfg, set_name)


def _policy_from_fit(fit: PolicyFit, ok: Sequence[ScoreRecord], task: str, cfg: LTTSettings,
                     set_name: str | None) -> Policy:
    model = _identity(ok, "model")
    stage = Stage(name=one_stage_name(model), model=model, evaluator=_identity(ok, "evaluator"),
                  spec_hash=_identity(ok, "spec_hash"), template_hash=_identity(ok, "template_hash"),
                  lower=fit.lower, upper=fit.upper)
    return Policy(
        kind="policy", task=task, stages=[stage], alpha=cfg.alpha, delta=cfg.delta, risk=cfg.risk,
        mondrian=cfg.mondrian, feasible=fit.feasible, n=fit.n, n_units=fit.n_units, unit_size=fit.unit_size,
        method=METHOD, ordering_fraction=cfg.ordering_fraction, seed=cfg.seed, set=set_name,
        calibration=fit.calibration, rows_needed=fit.rows_needed, units_needed=fit.units_needed, note=fit.note,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
