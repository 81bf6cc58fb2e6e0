"""Scripted test doubles: an evaluator and a judge model with fixed answers, for testing pipelines without weights.

``ScriptedEvaluator`` stands in for any ``Evaluator`` (fixed score per response
text); ``ScriptedModel`` for a ``JudgeModel`` under questions, criteria and
the wire layer (fixed probabilities per question text); ``FakeSpec`` holds the
few model-spec facts logic above the engine reads. They test aggregation,
calibration and protocol logic, never a backend: judgelab's own tests of
backends use the real models.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from judgelab.engine import Judgment
from judgelab.errors import ContextLengthError, QuestionError
from judgelab.evaluators import EvaluationRequest, EvaluationResponse
from judgelab.specs import TaskFormat

__all__ = ["FakeSpec", "ScriptedEvaluator", "ScriptedModel"]


class ScriptedEvaluator:
    """An evaluator that returns a fixed score per response text, for pipelines without weights.

    Parameters
    ----------
    scores
        Response text -> score (P(pass)); ``passed`` is ``score >= threshold``.
    threshold
        The pass threshold.
    die_after, interrupt_after
        Kill the process (``os._exit(137)``, no cleanup) or raise
        ``KeyboardInterrupt`` after that many rows: for testing resumption.
    fail_on
        Response texts that raise ``ValueError`` (a row that errors).

    ``batches`` records the size of every ``evaluate_many`` call.
    """

    def __init__(self, scores: dict[str, float], *, threshold: float = 0.5, die_after: int | None = None,
                 interrupt_after: int | None = None, fail_on: frozenset[str] = frozenset()) -> None:
        self.scores = scores
        self.threshold = threshold
        self.die_after = die_after
        self.interrupt_after = interrupt_after
        self.fail_on = fail_on
        self.seen = 0
        self.batches: list[int] = []

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        """Judge one request."""
        return self.evaluate_many([request])[0]

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        """Judge requests in order (one batch)."""
        requests = list(requests)
        self.batches.append(len(requests))
        out = []
        for r in requests:
            if self.die_after is not None and self.seen >= self.die_after:
                os._exit(137)  # a kill: no cleanup, no flush
            if self.interrupt_after is not None and self.seen >= self.interrupt_after:
                raise KeyboardInterrupt
            if r.response_content in self.fail_on:
                raise ValueError(f"cannot judge {r.response_content}")
            self.seen += 1
            p = self.scores[r.response_content]
            out.append(EvaluationResponse(
                passed=p >= self.threshold, score=p, feedback="scripted",
                metadata={"probabilities": {"Yes": p, "No": 1 - p}, "raw_score": p, "chunks": [p],
                          "model": "scripted", "spec_hash": "s1", "prompt_tokens": 5, "threshold": self.threshold},
            ))
        return out


@dataclass(frozen=True)
class FakeSpec:
    """The few ``ModelSpec`` facts logic above the engine reads: id, spec hash, tasks, chunk size."""

    spec_hash: str = "scripted-1"
    id: str = "scripted"
    tasks: dict[str, TaskFormat] = field(default_factory=dict)

    def effective_chunk_tokens(self, n_ctx: int) -> int:
        """The whole context (no chunking)."""
        return n_ctx


@dataclass(frozen=True)
class _Resolved:
    n_tokens: tuple[int, ...]


class ScriptedModel:
    """A judge model with fixed probabilities, for logic above the engine (questions, criteria, the wire layer).

    Parameters
    ----------
    script
        A text found in the question -> P(first label), the rest shared by the
        other labels, or a full distribution ``{label: p}``.
    too_long
        A text whose prompts raise ``ContextLengthError``.

    ``prompts`` and ``calls`` record what was judged. Never use it to test a backend.
    """

    id = "scripted"
    spec = FakeSpec()
    n_ctx = 10_000

    def __init__(self, script: Mapping[str, float | Mapping[str, float]], *, too_long: str | None = None) -> None:
        self.script = dict(script)
        self.too_long = too_long
        self.prompts: list[str] = []
        self.calls: list[tuple[int, tuple[str, ...]]] = []

    def render(self, user: str, *, system: str | None = None) -> str:
        """The prompt for ``user`` (the system prompt is ignored)."""
        return f"{user}\n\nAnswer:"

    def resolve_labels(self, labels: Sequence[str]) -> _Resolved:
        """One token per label word, two for one with a space."""
        return _Resolved(tuple(1 if " " not in lab else 2 for lab in labels))

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
        """The scripted judgment of every prompt."""
        self.calls.append((len(prompts), tuple(labels)))
        out = []
        for i, prompt in enumerate(prompts):
            if self.too_long and self.too_long in prompt:
                raise ContextLengthError(99_999, self.n_ctx, what=f"prompt #{i}")
            self.prompts.append(prompt)
            out.append(self._judgment(prompt, labels))
        return out

    def _judgment(self, prompt: str, labels: Sequence[str]) -> Judgment:
        question = prompt.rsplit("\n\n", 2)[-2]  # render_question writes no blank line
        value = next((v for key, v in self.script.items() if key in question), None)
        if value is None:
            raise QuestionError(f"the script has no answer for: {question!r}; add a key found in the question.")
        if isinstance(value, Mapping):
            probs = {lab: float(value.get(lab, 0.0)) for lab in labels}
        else:
            rest = (1.0 - value) / (len(labels) - 1)
            probs = {lab: (float(value) if k == 0 else rest) for k, lab in enumerate(labels)}
        best = max(probs, key=probs.__getitem__)
        return Judgment(best, probs[best], probs, prompt_tokens=len(prompt.split()))
