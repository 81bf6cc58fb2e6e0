"""Shared fixtures: the real embedded GGUF judge (loaded once per session) and the scripted stand-ins.

``scripted_evaluator`` (fixed scores per response, no model) and ``scripted_model`` (a judge model
with fixed probabilities) are for logic above the engine only; never use them to test a backend.
Tests get them as fixtures; a subprocess script may ``from conftest import ScriptedEvaluator``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from judgelab.engine import Judgment
from judgelab.errors import ContextLengthError
from judgelab.evaluators import EvaluationResponse

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("JUDGELAB_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def judge_model():
    """gemma-3-270m through llama.cpp: the embedded default judge."""
    from judgelab.engine import load_model

    model = load_model("gemma-3-270m", n_threads=2)
    yield model
    model.close()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The labelled sets in ../shared/data (skips when this checkout has none)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is not present")
    return SHARED_DATA


@pytest.fixture
def scripted_evaluator():
    """The ``ScriptedEvaluator`` class: ``scripted_evaluator(scores, die_after=..., fail_on=...)``."""
    return ScriptedEvaluator


@pytest.fixture
def scripted_model():
    """The ``ScriptedModel`` class: ``scripted_model(script, too_long=...)``."""
    return ScriptedModel


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


@dataclass(frozen=True)
class _Spec:
    spec_hash: str = "scripted-1"


@dataclass(frozen=True)
class _Resolved:
    n_tokens: tuple[int, ...]


class ScriptedModel:
    """``script`` maps a text found in the question to P(first label) or to a full distribution."""

    id = "scripted"
    spec = _Spec()
    n_ctx = 10_000

    def __init__(self, script: Mapping[str, float | Mapping[str, float]], *, too_long: str | None = None) -> None:
        self.script = dict(script)
        self.too_long = too_long
        self.prompts: list[str] = []
        self.calls: list[tuple[int, tuple[str, ...]]] = []

    def render(self, user: str, *, system: str | None = None) -> str:
        return f"{user}\n\nAnswer:"

    def resolve_labels(self, labels: Sequence[str]) -> _Resolved:
        return _Resolved(tuple(1 if " " not in lab else 2 for lab in labels))

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
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
        for key, value in self.script.items():
            if key in question:
                break
        else:
            raise AssertionError(f"the script has no answer for: {question!r}")
        if isinstance(value, Mapping):
            probs = {lab: float(value.get(lab, 0.0)) for lab in labels}
        else:
            rest = (1.0 - value) / (len(labels) - 1)
            probs = {lab: (float(value) if k == 0 else rest) for k, lab in enumerate(labels)}
        best = max(probs, key=probs.__getitem__)
        return Judgment(best, probs[best], probs, prompt_tokens=len(prompt.split()))
