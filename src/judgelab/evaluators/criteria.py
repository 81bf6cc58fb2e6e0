"""``CriteriaEvaluator``: a ``CriteriaJudge`` behind Spring AI's ``Evaluator`` (the JevEvaluator mapping)."""

from __future__ import annotations

from collections.abc import Iterable

from judgelab.errors import ParameterTypeError
from judgelab.evaluators._detail import JudgmentDetail
from judgelab.evaluators._spi import BaseEvaluator, EvaluationRequest, EvaluationResponse
from judgelab.evaluators._verdict import Outcome, Verdict
from judgelab.evaluators.criteria_judge import CriteriaJudge, make_state

__all__ = ["CriteriaEvaluator", "request_state", "verdict_score"]


def request_state(request: EvaluationRequest) -> dict[str, object]:
    """The state a request becomes.

    ``user_text`` -> ``user_question``, ``response_content`` ->
    ``assistant_answer``, ``data_list`` -> ``supporting_context`` (one entry
    per non-blank document; left out when there are none).
    """
    return make_state(
        question=request.user_text,
        answer=request.response_content,
        context=request.documents_text,
    )


def verdict_score(verdict: Verdict) -> float:
    """PASSED findings over findings that apply.

    INCONCLUSIVE and ERROR findings lower it without failing the verdict.
    With no applicable finding: 1.0 if the verdict passed, else 0.0.
    """
    applicable = [f for f in verdict.findings if f.outcome is not Outcome.NOT_APPLICABLE]
    if not applicable:
        return 1.0 if verdict.passed else 0.0
    return sum(f.outcome is Outcome.PASSED for f in applicable) / len(applicable)


class CriteriaEvaluator(BaseEvaluator):
    """Spring AI's ``Evaluator`` over a ``CriteriaJudge``.

    - ``passed`` is the verdict's;
    - ``score`` is ``verdict_score``: PASSED findings / findings that apply;
    - ``feedback`` is the verdict's (empty when it passed);
    - ``metadata["verdict"]`` is the ``Verdict``, ``metadata["findings"]`` an
      ordered ``{name: "PASSED" | "FAILED" | ...}`` map, and
      ``metadata["criteria"]`` ``{name: {"score": ..., "outcome": ...}}``
      (the number each rule compared, for per-criterion calibration).
    """

    name = "criteria"

    def __init__(self, judge: CriteriaJudge) -> None:
        if not isinstance(judge, CriteriaJudge):
            raise ParameterTypeError(
                f"CriteriaEvaluator wraps a CriteriaJudge, got {type(judge).__name__}; "
                "build one with CriteriaJudge.builder(model)...build()."
            )
        self.judge = judge

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        requests = list(requests)
        verdicts = self.judge.judge_states([request_state(r) for r in requests])
        return [self._response(v) for v in verdicts]

    def _response(self, verdict: Verdict) -> EvaluationResponse:
        model = self.judge.model
        spec = getattr(model, "spec", None)
        criteria: dict[str, dict[str, float | str]] = {
            f.name: {"score": f.score, "outcome": f.outcome.value}
            for f in verdict.findings
            if f.score is not None
        }
        model_id = getattr(model, "id", None)
        spec_hash = getattr(spec, "spec_hash", None)
        prompt_tokens = sum(getattr(f.answer, "prompt_tokens", 0) or 0 for f in verdict.findings)
        metadata: dict[str, object] = {
            "evaluator": self.name,
            "verdict": verdict,
            "findings": verdict.outcomes,
            "criteria": criteria,
            "model": model_id,
            "spec_hash": spec_hash,
            "prompt_tokens": prompt_tokens,
        }
        score = verdict_score(verdict)
        detail = JudgmentDetail(
            evaluator=self.name,
            raw_score=score,
            criteria={name: float(c["score"]) for name, c in criteria.items()},
            model=model_id,
            spec_hash=spec_hash,
            prompt_tokens=prompt_tokens,
        )
        return EvaluationResponse(
            passed=verdict.passed,
            score=score,
            feedback=verdict.feedback,
            metadata=metadata,
            detail=detail,
        )
