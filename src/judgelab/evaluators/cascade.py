"""``Cascade``: several evaluators as one, each deciding where its band certifies and escalating the rest.

Stage ``k`` FAILs a request whose score is below its band's ``lower``, PASSes
one at or above its ``upper``, and hands the rest to stage ``k + 1``; the
last stage decides, or abstains (to a person). The bands come from
``judgelab cascade fit`` (``judgelab.calibration.fit_cascade``), which
bounds the error of the whole cascade among the requests it decides.

Any ``Evaluator`` can be a stage: a judgelab evaluator over a local model,
a remote one over HTTP, a rubric or a criteria judge. Only the requests a
stage sees are sent to it, batched through ``evaluate_many``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from judgelab.errors import ParameterError, PolicyMismatchError
from judgelab.evaluators._detail import JudgmentDetail, judgment_detail
from judgelab.evaluators._identity import EvaluatorIdentity, config_hash, evaluator_identity
from judgelab.evaluators._policy import Band, JudgeIdentity, Policy
from judgelab.evaluators._spi import BaseEvaluator, EvaluationRequest, EvaluationResponse, Evaluator, evaluate_many

__all__ = ["Cascade", "CascadeBand", "stage_name", "stage_template_hash"]

CascadeBand = Band
"""The band type of a stage (``judgelab.evaluators.Band``), under the name earlier judgelab gave it."""

_StageDecision = Literal["pass", "fail", "abstain", "escalate"]
"""What one stage did with a request: a band's decision, or ``escalate`` (abstained before the last stage)."""


def stage_name(evaluator: Evaluator) -> str:
    """A readable name for a stage: its model id, else its class name."""
    model = getattr(getattr(evaluator, "model", None), "id", None)
    return str(model) if model else type(evaluator).__name__


def stage_template_hash(evaluator: Evaluator) -> str | None:
    """The stage's template hash (``YesNoEvaluator.template_hash``), or ``None``."""
    value = getattr(evaluator, "template_hash", None)
    return value if isinstance(value, str) else None


def stage_judge(evaluator: Evaluator) -> JudgeIdentity:
    """The judge an evaluator is: its spec hash and template hash, as a fitted stage records them."""
    return JudgeIdentity(evaluator_identity(evaluator).spec_hash, stage_template_hash(evaluator))


class Cascade(BaseEvaluator):
    """Judge with the cheap evaluator first and escalate what it cannot decide.

    Parameters
    ----------
    stages
        The evaluators, cheapest first (at least one).
    policy
        A fitted cascade (``load_cascade("cascade.json")``; a ``policy.json`` is a cascade of one stage): its bands,
        and the spec and template hash every stage must have (checked here;
        ``PolicyMismatchError`` names the stage that differs).
    bands
        Bands given directly instead (``Band`` or ``(lower, upper)``
        per stage); no hashes are checked.
    names
        Names for the stages in metadata (default: their model ids).

    Notes
    -----
    ``passed`` is true on a PASS decision; an abstention (the last stage's
    band) is ``passed=False`` with ``metadata["decision"] == "abstain"``.
    ``score`` is the deciding stage's score (the last stage's on an
    abstention). ``metadata["cascade"]`` holds the deciding stage, every
    consulted stage's score and decision, and the prompt tokens spent.
    """

    name = "cascade"

    def __init__(self, stages: Sequence[Evaluator], policy: Policy | None = None, *,
                 bands: Sequence[tuple[float | None, float | None]] | None = None,
                 names: Sequence[str] | None = None) -> None:
        self.stages = list(stages)
        if not self.stages:
            raise ParameterError("A Cascade needs at least one stage; got none. Pass the evaluators, cheapest first.")
        if (policy is None) == (bands is None):
            raise ParameterError("Give a Cascade either policy= (a fitted cascade) or bands=, not both or neither.")
        if policy is not None:
            wanted = list(policy.stages)
            if len(wanted) != len(self.stages):
                raise PolicyMismatchError(
                    f"The cascade was fitted for {len(wanted)} stages ({', '.join(s.name for s in wanted)}) but "
                    f"got {len(self.stages)}; pass one evaluator per fitted stage, in order.",
                    expected={"stages": len(wanted)}, actual={"stages": len(self.stages)},
                )
            for k, ev in enumerate(self.stages):
                policy.check_stage(k, stage_judge(ev), stage_name(ev))
            bands = policy.bands()
            names = names or [s.name for s in wanted]
        self.bands = [Band(*b) for b in bands or ()]  # never None here: exactly one of policy and bands is given
        if len(self.bands) != len(self.stages):
            raise ParameterError(f"A Cascade of {len(self.stages)} stages needs {len(self.stages)} bands; got {len(self.bands)}.")
        self.policy = policy
        self.names = list(names) if names else [stage_name(s) for s in self.stages]

    @property
    def template_hash(self) -> str:
        """A hash of the stages' template hashes and the bands."""
        return config_hash("cascade-template", {"stages": [stage_template_hash(s) for s in self.stages],
                                                "bands": [(b.lower, b.upper) for b in self.bands]})

    def identity(self) -> EvaluatorIdentity:
        """No single spec hash; the evaluator hash covers every stage's identity and the bands."""
        stages = [evaluator_identity(s) for s in self.stages]
        return EvaluatorIdentity(None, config_hash("cascade", {
            "stages": [(i.spec_hash, i.evaluator_hash) for i in stages],
            "bands": [(b.lower, b.upper) for b in self.bands]}))

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        requests = list(requests)
        trail: list[list[tuple[int, EvaluationResponse, _StageDecision]]] = [[] for _ in requests]
        pending = list(range(len(requests)))
        last = len(self.stages) - 1
        for k, (stage, band) in enumerate(zip(self.stages, self.bands)):
            if not pending:
                break
            answers = evaluate_many(stage, [requests[i] for i in pending])
            still = []
            for i, resp in zip(pending, answers):
                decision: _StageDecision = band.decide(float(resp.score))
                if decision == "abstain" and k < last:
                    decision = "escalate"
                    still.append(i)
                trail[i].append((k, resp, decision))
            pending = still
        return [self._response(t) for t in trail]

    def _response(self, trail: list[tuple[int, EvaluationResponse, _StageDecision]]) -> EvaluationResponse:
        k, resp, decision = trail[-1]
        stages, tokens = [], 0
        for j, r, d in trail:
            detail = judgment_detail(r)
            t = int(detail.prompt_tokens or 0)
            tokens += t
            stages.append({"stage": j + 1, "name": self.names[j], "score": float(r.score), "decision": d,
                           "prompt_tokens": t, "model": detail.model})
        decided_by = None if decision == "abstain" else k + 1
        meta: dict[str, object] = {
            "evaluator": self.name, "decision": decision, "decided_by": decided_by,
            "decided_by_name": self.names[k] if decided_by else None,
            "cascade": {"stages": stages, "prompt_tokens": tokens, "bands": [(b.lower, b.upper) for b in self.bands]},
            "prompt_tokens": tokens, "score": float(resp.score),
        }
        if self.policy is not None:
            meta["policy"] = self.policy.summary()
        where = f"stage {k + 1} ({self.names[k]})"
        feedback = (f"{decision.upper()} by {where}: score {resp.score:.3f}." if decided_by else
                    f"ABSTAIN: no stage could decide; the last, {where}, scored {resp.score:.3f} inside its band.")
        base = judgment_detail(resp)
        # the cascade has no calibrator of its own: its raw score is the deciding stage's score
        detail = JudgmentDetail(evaluator=self.name, raw_score=float(resp.score), probabilities=base.probabilities,
                                model=base.model, spec_hash=base.spec_hash, prompt_tokens=tokens)
        return EvaluationResponse(passed=decision == "pass", score=float(resp.score), feedback=feedback,
                                  metadata=meta, detail=detail)
