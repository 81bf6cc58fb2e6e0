"""The one policy model: a fitted cascade of judges, where a pass/fail/abstain policy is the one-stage case.

A ``Policy`` is its stages (who judges: model, evaluator, spec and template
hash; its ``Band``; its cost per row) plus what the fit guarantees (alpha,
delta, risk, n, method) and what it measured. ``kind`` says which fit wrote
it: ``"policy"`` (``judgelab policy``: one stage, two thresholds, any risk)
or ``"cascade"`` (``judgelab cascade fit``: one band per stage, fitted
jointly, with stage costs). Every stage is decided the same way
(``Band.decide``, ``cascade_decisions``) and checked against a judge the
same way (``check_judge``).

The files keep the layouts earlier judgelab wrote, so old files load and
new files read the same: ``policy.json`` is flat (the one stage's band and
hashes at the top level), ``cascade.json`` lists its stages. Each is read by
one validated reader, ``load_policy`` or ``load_cascade``, whose
``DataError`` names the file and the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from judgelab.errors import DataError, ParameterError, PolicyMismatchError
from judgelab.evaluators._policy_figures import FitFigures, HeldoutCascade, HeldoutPolicy
from judgelab.textfiles import load_json_model, save_json_model

__all__ = ["CASCADE_METHOD", "LTT_CITATION", "POLICY_METHOD", "Band", "CascadePolicy", "CascadeStage", "JudgeIdentity",
           "Policy", "Stage", "cascade_decisions", "check_judge", "load_cascade", "load_policy", "one_stage_name"]

POLICY_METHOD = "learn-then-test/fixed-sequence"
"""How a one-stage policy's thresholds are fitted."""

CASCADE_METHOD = "learn-then-test/fixed-sequence over the joint cascade decision"
"""How a cascade's bands are fitted."""

LTT_CITATION = (
    "Angelopoulos, Bates, Candès, Jordan, Lei (2021). Learn then Test: Calibrating predictive "
    "algorithms to achieve risk control. arXiv:2110.01052"
)
"""The method behind policies and cascades."""

Decision = Literal["pass", "fail", "abstain"]


class Band(NamedTuple):
    """One stage's band: FAIL below ``lower``, PASS at or above ``upper``, between undecided (``None``: no threshold).

    A plain ``(lower, upper)`` tuple is a band too.
    """

    lower: float | None
    upper: float | None

    def decide(self, score: float) -> Decision:
        """``"fail"``, ``"pass"``, or ``"abstain"`` inside the band (a cascade escalates there)."""
        if self.lower is not None and score < self.lower:
            return "fail"
        if self.upper is not None and score >= self.upper:
            return "pass"
        return "abstain"


def cascade_decisions(bands: Sequence[Band], scores: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.object_], npt.NDArray[np.int_]]:
    """The joint decision of stages' bands on rows: ``("pass"|"fail"|"abstain", deciding stage)`` arrays.

    ``scores`` is ``(n_stages, n_rows)`` (one stage: ``(n_rows,)`` will do);
    the deciding stage is 0-based and -1 where every stage left the row
    undecided. A row is decided by the first stage whose band it falls
    outside, as ``Band.decide``.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    n = s.shape[1]
    out = np.full(n, "abstain", dtype=object)
    stage = np.full(n, -1, dtype=int)
    open_ = np.ones(n, dtype=bool)
    for k, (lower, upper) in enumerate(bands):
        fail = open_ & (s[k] < lower) if lower is not None else np.zeros(n, dtype=bool)
        pas = open_ & ~fail & (s[k] >= upper) if upper is not None else np.zeros(n, dtype=bool)
        out[fail], out[pas] = "fail", "pass"
        stage[fail | pas] = k
        open_ &= ~(fail | pas)
    return out, stage


class JudgeIdentity(NamedTuple):
    """Which judge a stage was fitted on: its model spec hash and its template hash (``None``: not recorded)."""

    spec_hash: str | None
    template_hash: str | None


def check_judge(wanted: JudgeIdentity, have: JudgeIdentity, *, subject: str, names: tuple[str, str],
                fix: str) -> None:
    """The one judge-identity check: refuse ``have`` when a hash ``wanted`` records differs.

    Parameters
    ----------
    wanted, have
        The identity the stage was fitted on, and the judge's.
    subject
        The start of the message ("The policy for task ... was calibrated for another judge than ...").
    names
        What to call the two sides in the message (``("policy", "judge")``).
    fix
        What to do about it.

    Raises
    ------
    PolicyMismatchError
        Naming every hash that differs, on one line.
    """
    fields = {"spec hash": "spec_hash", "template hash": "template_hash"}
    bad = [(label, getattr(wanted, f), getattr(have, f)) for label, f in fields.items()
           if getattr(wanted, f) is not None and getattr(wanted, f) != getattr(have, f)]
    if bad:
        ours, theirs = names
        diffs = "; ".join(f"{ours} {label} {w}, {theirs} {label} {h}" for label, w, h in bad)
        raise PolicyMismatchError(f"{subject}: {diffs}. {fix}", expected=wanted._asdict(), actual=have._asdict())


class Stage(BaseModel):
    """One stage: who judges (model, evaluator, spec and template hash), its band and its cost per row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    model: str | None = None
    evaluator: str | None = None
    spec_hash: str | None = None
    template_hash: str | None = None
    lower: float | None = None
    upper: float | None = None
    cost: float = 1.0
    run: str | None = None

    @property
    def band(self) -> Band:
        """``Band(lower, upper)``."""
        return Band(self.lower, self.upper)

    @property
    def judge(self) -> JudgeIdentity:
        """``JudgeIdentity(spec_hash, template_hash)``."""
        return JudgeIdentity(self.spec_hash, self.template_hash)


_STAGE_KEYS = ("lower", "upper", "spec_hash", "template_hash", "model", "evaluator")
"""The one stage's fields that ``policy.json`` keeps at its top level."""
_POLICY_LAYOUT = ("version", "task", "lower", "upper", "alpha", "delta", "risk", "mondrian", "feasible", "n",
                  "n_units", "unit_size", "method", "citation", "ordering_fraction", "seed", "spec_hash",
                  "template_hash", "model", "evaluator", "set", "calibration", "heldout", "rows_needed",
                  "units_needed", "note", "created")
_CASCADE_LAYOUT = ("version", "kind", "task", "stages", "alpha", "delta", "risk", "feasible", "n", "n_units",
                   "unit_size", "method", "citation", "cost_unit", "abstain_cost", "ordering_fraction", "seed",
                   "set", "calibration", "heldout", "rows_needed", "units_needed", "note", "created")


def one_stage_name(model: str | None) -> str:
    """The name of a one-stage policy's stage: its model, else ``"judge"``."""
    return model or "judge"


#: The fields a one-stage policy reads from (and ``Policy.model_copy`` writes to) its stage.
_ONE_STAGE_FIELDS = frozenset({"lower", "upper", "spec_hash", "template_hash", "model", "evaluator"})


class Policy(BaseModel):
    """A fitted policy: one or more stages, each deciding where its band certifies, and what the fit guarantees.

    ``kind="policy"`` (``judgelab policy``) has one stage: FAIL below
    ``lower``, PASS at or above ``upper``, ABSTAIN between; ``lower``,
    ``upper``, ``spec_hash``, ``template_hash``, ``model`` and
    ``evaluator`` read that stage. ``kind="cascade"`` (``judgelab cascade
    fit``) hands a row a stage leaves undecided to the next, and prices
    stages (``cost_unit``, ``abstain_cost``). A policy that is not
    ``feasible`` has no thresholds and abstains on every row.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    kind: Literal["policy", "cascade"] = "policy"
    task: str
    stages: list[Stage] = Field(min_length=1)
    alpha: float
    delta: float
    risk: Literal["error", "false-pass"] = "error"
    mondrian: bool = False
    feasible: bool
    n: int
    n_units: int
    unit_size: int = 1
    method: str = POLICY_METHOD
    citation: str = LTT_CITATION
    cost_unit: str = "prompt tokens"
    abstain_cost: float | None = None
    ordering_fraction: float = 0.3
    seed: int | None = 0
    set: str | None = None
    calibration: FitFigures = FitFigures()
    heldout: HeldoutPolicy | HeldoutCascade | None = None
    rows_needed: int | None = None
    units_needed: int | None = None
    note: str = ""
    created: str = ""

    @model_validator(mode="before")
    @classmethod
    def _one_stage_at_top_level(cls, data: Any) -> Any:
        """``policy.json`` (and ``Policy(lower=..., upper=..., spec_hash=...)``) keeps its one stage flat."""
        if not isinstance(data, dict) or data.get("kind", "policy") != "policy" or "stages" in data:
            return data
        data = dict(data)
        stage = {k: data.pop(k) for k in _STAGE_KEYS if k in data}
        return {**data, "stages": [{"name": one_stage_name(stage.get("model")), **stage}]}

    @model_validator(mode="after")
    def _shape_of_kind(self) -> Policy:
        if self.kind == "policy" and len(self.stages) != 1:
            raise ValueError(f"a policy of kind 'policy' has one stage; got {len(self.stages)} (use kind 'cascade')")
        if self.kind == "cascade" and self.abstain_cost is None:
            raise ValueError("a cascade needs abstain_cost (the cost of an abstention)")
        return self

    @model_serializer(mode="wrap")
    def _file_layout(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """The layout of the file each kind has always been written in (policy.json flat, cascade.json staged)."""
        data = handler(self)
        if self.kind == "cascade":
            return {k: data[k] for k in _CASCADE_LAYOUT if k in data}
        stage = (data.get("stages") or [{}])[0]
        flat = {**data, **{k: stage[k] for k in _STAGE_KEYS if k in stage}}
        return {k: flat[k] for k in _POLICY_LAYOUT if k in flat}

    # -- the one stage of a two-threshold policy ------------------------------------------------

    @property
    def stage(self) -> Stage:
        """The one stage (``ParameterError`` for a cascade of several: read ``stages``)."""
        if len(self.stages) != 1:
            raise ParameterError(f"This is a cascade of {len(self.stages)} stages ({self._names()}), not a one-judge "
                                 "policy; read its stages (policy.stages), or apply it with Cascade(stages, policy=...).")
        return self.stages[0]

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Policy:
        """A copy with ``update``; the one stage's fields (``lower``, ``spec_hash``...) go to that stage.

        Raises
        ------
        ParameterError
            When ``update`` names a stage field on a cascade of several stages.
        """
        update = dict(update or {})
        moved = {k: update.pop(k) for k in _ONE_STAGE_FIELDS & set(update)}
        if moved:
            update["stages"] = [self.stage.model_copy(update=moved)]
        return super().model_copy(update=update, deep=deep)

    @property
    def lower(self) -> float | None:
        """The one stage's FAIL threshold."""
        return self.stage.lower

    @property
    def upper(self) -> float | None:
        """The one stage's PASS threshold."""
        return self.stage.upper

    @property
    def spec_hash(self) -> str | None:
        """The one stage's model spec hash."""
        return self.stage.spec_hash

    @property
    def template_hash(self) -> str | None:
        """The one stage's template hash."""
        return self.stage.template_hash

    @property
    def model(self) -> str | None:
        """The one stage's model id."""
        return self.stage.model

    @property
    def evaluator(self) -> str | None:
        """The one stage's evaluator."""
        return self.stage.evaluator

    def bands(self) -> list[Band]:
        """Every stage's ``Band``, in order."""
        return [s.band for s in self.stages]

    def decide(self, score: float) -> Decision:
        """``"pass"``, ``"fail"`` or ``"abstain"`` for one score of the one stage."""
        return self.stage.band.decide(score)

    def check(self, *, spec_hash: str | None, template_hash: str | None, where: str = "this judge") -> None:
        """Refuse a judge whose model spec or template differs from the one the one stage was calibrated on.

        Raises
        ------
        PolicyMismatchError
            Naming the policy's hashes and the judge's.
        """
        check_judge(self.stage.judge, JudgeIdentity(spec_hash, template_hash), names=("policy", "judge"),
                    subject=f"The policy for task {self.task!r} (model {self.model or '?'}, set {self.set or '?'}) "
                            f"was calibrated for another judge than {where}",
                    fix="Load the judge it was calibrated for, or calibrate a new policy for this one (judgelab policy RUN).")

    def check_stage(self, k: int, judge: JudgeIdentity, name: str) -> None:
        """Refuse ``judge`` (called ``name``) as stage ``k`` (0-based) when its hashes differ from the stage's.

        Raises
        ------
        PolicyMismatchError
            Naming the stage and every hash that differs.
        """
        want = self.stages[k]
        check_judge(want.judge, judge, names=("cascade", "stage"),
                    subject=f"Stage {k + 1} of the cascade ({name}) is not the judge the cascade was fitted for "
                            f"(stage {want.name!r})",
                    fix="Build that stage from its spec, or refit the cascade (judgelab cascade fit).")

    # -- for people and protocols -----------------------------------------------------------------

    def summary(self) -> dict[str, object]:
        """What travels with every decision: the bands, alpha, delta, n (and risk, for a policy)."""
        if self.kind == "cascade":
            return {"kind": "cascade", "task": self.task, "alpha": self.alpha, "delta": self.delta, "n": self.n,
                    "feasible": self.feasible, "stages": [s.name for s in self.stages],
                    "bands": [tuple(b) for b in self.bands()]}
        return {"lower": self.lower, "upper": self.upper, "alpha": self.alpha, "delta": self.delta,
                "n": self.n, "risk": self.risk, "mondrian": self.mondrian, "feasible": self.feasible,
                "task": self.task}

    def describe(self) -> str:
        """One sentence for people."""
        return self._describe_cascade() if self.kind == "cascade" else self._describe_policy()

    def _names(self) -> str:
        return " -> ".join(s.name for s in self.stages)

    def _describe_policy(self) -> str:
        if not self.feasible:
            return (f"No pair of thresholds keeps the {self.risk} rate <= {self.alpha:g} (with probability "
                    f">= {1 - self.delta:g}) on these {self.n} rows: the policy abstains on every row. {self.note}")
        cov = self.calibration.coverage
        fail = "never FAIL" if self.lower is None else f"FAIL below {self.lower:.4f}"
        pas = "never PASS" if self.upper is None else f"PASS at or above {self.upper:.4f}"
        return (f"{fail}, {pas}, ABSTAIN between: "
                f"{self.risk} rate among decided rows <= {self.alpha:g} with probability >= {1 - self.delta:g} "
                f"({self.method}, {self.n} rows in {self.n_units} units); decides "
                f"{(cov or 0) * 100:.1f}% of the calibration rows.")

    def _describe_cascade(self) -> str:
        names = self._names()
        if not self.feasible:
            return (f"No cascade {names} keeps the error among decided rows <= {self.alpha:g} (with probability "
                    f">= {1 - self.delta:g}) on these {self.n} rows: it abstains on every row. {self.note}")
        cal = self.calibration
        share = ", ".join(f"{s.name} {v * 100:.1f}%" for s, v in zip(self.stages, cal.decided_share or []))
        return (f"Cascade {names}: error among decided rows <= {self.alpha:g} with probability >= {1 - self.delta:g} "
                f"({self.n} rows in {self.n_units} units); decides {(cal.coverage or 0) * 100:.1f}% of the "
                f"calibration rows ({share}) at {math.nan if cal.cost is None else cal.cost:.1f} {self.cost_unit} per row.")

    def save(self, path: str | Path) -> Path:
        """Write the policy as JSON (``policy.json``, ``cascade.json``); returns the path."""
        return save_json_model(self, path)


CascadePolicy = Policy
"""A fitted cascade: the one policy model (earlier judgelab's name for it)."""
CascadeStage = Stage
"""A stage of a fitted cascade: the one stage type (earlier judgelab's name for it)."""


def _read(path: str | Path, kind: str, hint: str) -> Policy:
    return load_json_model(Policy, path, kind=kind, hint=hint)


def load_policy(path: str | Path) -> Policy:
    """Read a ``policy.json`` written by ``fit_policy(...).save`` or ``judgelab policy`` (one judge).

    Raises
    ------
    DataError
        If the file cannot be read, is not a policy, or is a cascade of several stages.
    """
    policy = _read(path, "policy", "Write one with 'judgelab policy RUN'.")
    if len(policy.stages) != 1:
        raise DataError(f"{path} is a cascade of {len(policy.stages)} stages ({policy._names()}), not a one-judge "
                        "policy. Apply it as a cascade (judgelab serve --cascade, the cascade@FILE evaluator), "
                        "or write a policy with 'judgelab policy RUN'.", path=str(path))
    return policy


def load_cascade(path: str | Path) -> Policy:
    """Read a ``cascade.json`` written by ``judgelab cascade fit`` (a ``policy.json`` is a cascade of one stage).

    Raises
    ------
    DataError
        If the file cannot be read or is not a cascade.
    """
    return _read(path, "cascade", "Write one with 'judgelab cascade fit RUN_1 RUN_2 ...'.")
