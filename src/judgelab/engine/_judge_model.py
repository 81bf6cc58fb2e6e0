"""``JudgeModel``: what every judge model offers, wherever it runs.

Three kinds of model answer judge questions: a model loaded in this process
(``BackendJudgeModel``, over llama.cpp or transformers), a judge another
server runs (``RemoteJudgeModel``) and the server's view of its one model
that judges through a queue (``judgelab.server``'s ``QueuedModel``). Evaluators,
typed questions, calibration and tuning are written against this protocol
and take any of them (or a stand-in such as ``LazyModel``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from judgelab.engine._labels import ResolvedLabels
from judgelab.engine._model import Judgment
from judgelab.specs import ModelSpec

__all__ = ["JudgeModel"]


class JudgeModel(Protocol):
    """A judge model: a prompt and a closed set of labels in, probabilities out.

    ``load_model`` returns one. The core call is ``probabilities(prompt, labels)``;
    ``judge_many`` gives each prompt's full ``Judgment``. ``render`` writes a
    user turn in the model's prompt format; ``tokenize``, ``count_tokens`` and
    ``check_prompt`` size prompts against ``n_ctx`` (for chunking).
    """

    @property
    def id(self) -> str:
        """The model spec's id."""

    @property
    def spec(self) -> ModelSpec:
        """The model spec (prompt format, labels, family, hash)."""

    @property
    def n_ctx(self) -> int:
        """The context length, in tokens."""

    @property
    def stats(self) -> dict[str, int]:
        """Counters: ``judgments`` and ``prompt_tokens`` so far."""

    def render(self, user: str, *, system: str | None = None) -> str:
        """The prompt for a user turn, in this model's prompt format."""

    def tokenize(self, text: str) -> list[int]:
        """Token ids of a whole prompt."""

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as a plain-text fragment."""

    def resolve_labels(self, labels: Sequence[str]) -> ResolvedLabels:
        """The labels checked and resolved to what the model reads."""

    def check_prompt(self, prompt: str, *, what: str = "prompt") -> int:
        """The prompt's token count, checked against the context."""

    def probabilities(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """P(label | prompt) over ``labels``."""

    def batch_probabilities(self, prompts: Sequence[str], labels: Sequence[str]) -> list[dict[str, float]]:
        """``probabilities`` for many prompts."""

    def judge(self, prompt: str, labels: Sequence[str]) -> Judgment:
        """The ``Judgment`` of one prompt."""

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
        """The ``Judgment`` of each prompt."""

    def complete(self, prompt: str, max_tokens: int = 256, stop: Sequence[str] = ()) -> str:
        """Free greedy text after ``prompt``, up to ``max_tokens`` or a stop string."""

    def close(self) -> None:
        """Free what the model holds (a shared model's view does nothing)."""
