"""The tools' results as pydantic models: their JSON schemas are the tools' output schemas."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["CheckResult", "EvaluationResult", "FullEvaluationResult"]


class EvaluationResult(BaseModel):
    """What an evaluator decided about one request."""

    passed: bool = Field(description="True only on a pass decision.")
    score: float = Field(description="The evaluator's score in [0, 1] (a probability for yes/no evaluators).")
    decision: Literal["pass", "fail", "abstain"] = Field(
        description="abstain: a calibrated policy cannot decide at this score; get a second opinion.")
    threshold: float | None = Field(description="The pass threshold on the score; null when a policy decided.")
    policy: dict[str, object] | None = Field(description="The calibrated policy that decided (band lower/upper, "
                                                      "alpha, n), or null.")
    feedback: str = Field(description="Why, in one sentence.")
    chunks: list[float] | None = Field(description="Per-chunk scores: a long document is split and the best chunk counts.")
    model: str = Field(description="The judge model's id.")
    spec_hash: str | None = Field(description="The judge model spec's hash (identifies the exact judge).")
    evaluator: str = Field(description="The evaluator that judged.")


class CheckResult(EvaluationResult):
    """``fact_check`` and ``check_relevancy``: the evaluation plus its probability and verdict words."""

    probability: float = Field(description="P(supported) for fact_check, P(relevant) for check_relevancy.")
    verdict: str = Field(description="supported / not supported, relevant / not relevant, or abstain.")


class FullEvaluationResult(EvaluationResult):
    """``evaluate``: the evaluation plus the evaluator's full metadata."""

    metadata: dict[str, object] = Field(description="Everything the evaluator measured (label probabilities, "
                                                 "prompt tokens, criteria...).")
