"""A scripted judge model (fixed probabilities) for logic above the engine.

Never use it to test a backend: it has no tokens and no logits. It answers a
prompt from the first script key found in the prompt's question part (the
text after the state), so the same state can carry several questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgelab.engine import Judgment
from judgelab.errors import ContextLengthError


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
