"""A scripted evaluator for calibration tests (fixed probabilities, no model)."""

from __future__ import annotations

import os

from judgelab.evaluators import EvaluationResponse


class ScriptedEvaluator:
    """Returns a fixed score per response text; optionally dies after ``die_after`` rows."""

    def __init__(self, scores: dict[str, float], *, threshold: float = 0.5, die_after: int | None = None,
                 interrupt_after: int | None = None, fail_on: frozenset[str] = frozenset()) -> None:
        self.scores = scores
        self.threshold = threshold
        self.die_after = die_after
        self.interrupt_after = interrupt_after
        self.fail_on = fail_on
        self.seen = 0
        self.batches: list[int] = []

    def evaluate_many(self, requests):
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
                metadata={"probabilities": {"yes": p, "no": 1 - p}, "raw_score": p, "chunks": [p],
                          "model": "scripted", "spec_hash": "s1", "prompt_tokens": 5, "threshold": self.threshold},
            ))
        return out
