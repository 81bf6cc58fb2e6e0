"""The one held-out method: how a fitted policy or cascade does on rows it was not fitted on.

The rows are held out as ``analyze`` holds them out (``split_plan``): with a
dev/test split in the records the bands are fitted on ``dev`` and decide
``test``; otherwise k-fold cross-fitting over units (each fold's rows are
decided by bands fitted on the other folds). Coverage, the risk and the
error among decided rows (and for a cascade the cost per row and the share
decided at each stage) come with 95% bootstrap intervals that resample whole units.

``heldout_policy`` measures a two-threshold policy this way;
``heldout_cascade`` a cascade, and for comparison each stage alone with
its own band (at the same alpha, delta and abstain cost).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from judgelab.calibration._options import options_or_default
from judgelab.calibration.analysis import SplitPlan, bootstrap_many, shared_units, split_plan
from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.policy._cascade_fit import CascadeFitOptions, fit_cascade_arrays
from judgelab.calibration.policy._cascade_policy import StageRows
from judgelab.calibration.policy._ltt import LTTSettings, Risk, fit_arrays
from judgelab.calibration.policy._policy import fit_policy, one_task
from judgelab.evaluators import Band, HeldoutCascade, HeldoutFigures, HeldoutPolicy, Policy, cascade_decisions

__all__ = ["HeldoutRows", "fit_and_save_policy", "heldout_cascade", "heldout_decisions", "heldout_plan",
           "heldout_policy", "heldout_summary"]

FitBands = Callable[[npt.NDArray[np.bool_]], Sequence[Band]]
"""Fit on the rows of a boolean mask; return the bands (one per stage)."""


def heldout_plan(y: npt.NDArray[np.int_], splits: npt.NDArray[np.str_], units: npt.NDArray[np.str_], *, k_folds: int,
                 seed: int | None) -> SplitPlan | None:
    """``split_plan``'s dev/test split or unit-grouped folds; ``None`` when there are too few units for either."""
    plan = split_plan(y, splits, units, k_folds, seed)
    return None if plan.mode == "in-sample" else plan


@dataclass(frozen=True)
class HeldoutRows:
    """Every row's held-out decision and deciding stage (-1: undecided), and which rows were held out."""

    decisions: npt.NDArray[np.object_]
    stage: npt.NDArray[np.int_]
    held: npt.NDArray[np.bool_]
    mode: str


def heldout_decisions(fit: FitBands, scores: npt.NDArray[np.float64], plan: SplitPlan) -> HeldoutRows:
    """Decide each held-out row with bands ``fit`` found on rows held apart from it.

    ``scores`` is ``(n_stages, n_rows)``; ``plan`` from ``heldout_plan``.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    n = s.shape[1]
    dec = np.full(n, "", dtype=object)
    stage = np.full(n, -1, dtype=int)
    if plan.mode == "split":
        dec[plan.held], stage[plan.held] = cascade_decisions(fit(plan.tune), s[:, plan.held])
        return HeldoutRows(dec, stage, dec != "", "dev/test split")
    for test in plan.folds or ():
        train = np.ones(n, dtype=bool)
        train[test] = False
        dec[test], stage[test] = cascade_decisions(fit(train), s[:, test])
    return HeldoutRows(dec, stage, dec != "", f"{len(plan.folds or ())}-fold cross-fitting over units")


def _row_cost(stage: npt.NDArray[np.int_], decided: npt.NDArray[np.bool_], costs: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    reached = np.ones(len(stage), dtype=bool)
    cost = np.zeros(len(stage))
    for k, c in enumerate(costs):
        cost += c * reached
        reached &= ~((stage == k) & decided)
    return cost


def heldout_summary(rows: HeldoutRows, y: npt.NDArray[np.int_], units: npt.NDArray[np.str_], *, risk: Risk | None = "error",
                    costs: npt.NDArray[np.float64] | None = None, n_resamples: int = 1000, seed: int | None = 0) -> HeldoutFigures:
    """Coverage, risk (unless ``risk`` is None: a cascade's risk is its error), error, and with ``costs`` the
    cost per row and each stage's decided share, over the held-out rows, with bootstrap intervals over whole units."""
    d, stage, yh, uh = rows.decisions[rows.held], rows.stage[rows.held], y[rows.held], units[rows.held]
    decided = d != "abstain"
    false_pass = ((d == "pass") & (yh == 0)).astype(float)
    wrong = (false_pass + ((d == "fail") & (yh == 1))).astype(float)
    bad = false_pass if risk == "false-pass" else wrong
    priced = costs is not None
    cost = _row_cost(stage, decided, costs) if costs is not None else np.zeros(len(d))
    at = [((stage == k) & decided).astype(float) for k in range(len(costs) if costs is not None else 0)]

    def stat(dec_: npt.NDArray[np.float64], bad_: npt.NDArray[np.float64], wrong_: npt.NDArray[np.float64], cost_: npt.NDArray[np.float64],
             *at_: npt.NDArray[np.float64]) -> dict[str, float]:
        n_dec = dec_.sum()
        out: dict[str, Any] = {"coverage": dec_.mean()}
        if risk is not None:
            out["risk"] = bad_.sum() / n_dec if n_dec else math.nan
        out["error"] = wrong_.sum() / n_dec if n_dec else math.nan
        if priced:
            out["cost"] = cost_.mean()
            out.update({f"stage_{k + 1}": a.mean() for k, a in enumerate(at_)})
        return out

    ivs = bootstrap_many(stat, [decided.astype(float), bad, wrong, cost, *at], n_resamples=n_resamples, seed=seed,
                         units=shared_units(uh))
    shares = [ivs.pop(k).to_dict() for k in [k for k in ivs if k.startswith("stage_")]]
    return HeldoutFigures.model_validate({"n": int(rows.held.sum()), "decided": int(decided.sum()),
                                          **{k: iv.to_dict() for k, iv in ivs.items()},
                                          **({"stage_shares": shares} if shares else {})})


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
) -> HeldoutPolicy | None:
    """Coverage and realised risk of the policy on rows it was not fitted on, with 95% intervals.

    With a dev/test split in the records the policy is fitted on ``dev`` and
    applied to ``test``; otherwise by k-fold cross-fitting over units.
    ``None`` when there are too few units for either.
    """
    _, ok = one_task(records)
    s = np.array([r.score for r in ok], dtype=float)
    y = np.array([r.label for r in ok], dtype=int)
    units = np.array([r.unit for r in ok])
    plan = heldout_plan(y, np.array([r.split or "" for r in ok]), units, k_folds=k_folds, seed=seed)
    if plan is None:
        return None
    settings = LTTSettings(alpha=alpha, delta=delta, risk=risk, mondrian=mondrian, seed=seed)

    def fit(train: npt.NDArray[np.bool_]) -> Sequence[Band]:
        return fit_arrays(s[train], y[train], units[train], settings).bands

    rows = heldout_decisions(fit, s, plan)
    figures = heldout_summary(rows, y, units, risk=risk, n_resamples=n_resamples, seed=seed)
    return HeldoutPolicy(mode=rows.mode, **{k: getattr(figures, k) for k in figures.model_fields_set})


def heldout_cascade(al: StageRows, policy: Policy, *, k_folds: int = 5, n_resamples: int = 1000) -> HeldoutCascade | None:
    """Held-out coverage, error, cost and stage shares of the cascade and of each stage alone (None: too few units).

    The rows are held out as ``heldout_policy`` holds them out: the records' dev/test split, else folds.
    """
    plan = heldout_plan(al.labels, al.splits, al.units, k_folds=k_folds, seed=policy.seed)
    if plan is None:
        return None
    costs = np.array([s.cost for s in policy.stages])
    base = CascadeFitOptions(alpha=policy.alpha, delta=policy.delta, costs=tuple(costs),
                             abstain_cost=policy.abstain_cost, ordering_fraction=policy.ordering_fraction,
                             seed=policy.seed)

    def system(scores: npt.NDArray[np.float64], options: CascadeFitOptions) -> tuple[str, HeldoutFigures]:
        def fit(train: npt.NDArray[np.bool_]) -> Sequence[Band]:
            return fit_cascade_arrays(scores[:, train], al.labels[train], al.units[train], options).bands

        rows = heldout_decisions(fit, scores, plan)
        return rows.mode, heldout_summary(rows, al.labels, al.units, risk=None, costs=np.asarray(options.costs),
                                          n_resamples=n_resamples, seed=policy.seed)

    systems: dict[str, HeldoutFigures] = {}
    mode, systems["cascade"] = system(al.scores, base)
    for k, st in enumerate(policy.stages):
        _, systems[f"{st.name} alone"] = system(al.scores[k:k + 1], replace(base, costs=(float(costs[k]),)))
    return HeldoutCascade(mode=mode, n=int(plan.held.sum()) if plan.mode == "split" else int(len(al.labels)),
                          systems=systems)


def fit_and_save_policy(
    records: Sequence[ScoreRecord], path: str | Path, settings: LTTSettings | None = None, *,
    set_name: str | None = None,
) -> Policy:
    """``fit_policy`` plus its held-out check (``heldout_policy``), saved to ``path``: what
    ``judgelab policy`` and the report's Deployment section both write.

    ``settings`` is an ``LTTSettings`` (None: its defaults), as for ``fit_policy``.
    """
    cfg = options_or_default(LTTSettings, settings, "fit_and_save_policy", name="settings", example="alpha=0.05")
    policy = fit_policy(records, cfg, set_name=set_name)
    held = heldout_policy(records, alpha=cfg.alpha, delta=cfg.delta, risk=cfg.risk, mondrian=cfg.mondrian,
                          seed=cfg.seed)
    policy = policy.model_copy(update={"heldout": held})
    policy.save(path)
    return policy
