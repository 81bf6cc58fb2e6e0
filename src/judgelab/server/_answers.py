"""What the Ollama and OpenAI routes share: one label answered, its logprobs, the ``judgelab`` field.

A judge's reply is one label. Both protocols report it the same way: each
label counts as one "token" whose logprob is the log of its probability
restricted to the labels (clamped to -9999, since JSON has no -inf), and an
extra ``judgelab`` field, which their clients ignore, carries the whole
distribution and the request fields that were ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import Request

from judgelab.engine import Judgment
from judgelab.server._queued import guarded
from judgelab.server._state import JudgeState

__all__ = ["NEVER", "answer_label", "label_logprobs", "judgelab_field"]

NEVER = -9999.0
"""The logprob written for a label with probability 0 (OpenAI and Ollama write -9999 for "never")."""


async def answer_label(
    request: Request, prompt: str, labels: Sequence[str], max_tokens: int | None, *, param: str
) -> tuple[Judgment, int]:
    """The judgment of one chat or generate prompt and the tokens its label takes.

    Judged on the worker in turns with other requests; dropped if the client
    disconnects first. 400 when the label needs more than ``max_tokens``.
    """
    state: JudgeState = request.app.state.judge
    ticket = state.ticket()
    judgment, n_out = await guarded(request, ticket, state.answer(prompt, labels, max_tokens, ticket, param=param))
    state.metrics.add_output_tokens(n_out)
    return judgment, n_out


def label_logprobs(judgment: Judgment, top: int | None) -> tuple[tuple[str, float], list[tuple[str, float]]]:
    """The chosen label with its logprob, and the ``top`` most likely labels with theirs."""
    ranked = sorted(judgment.logprobs.items(), key=lambda kv: -kv[1])
    chosen = (judgment.label, max(judgment.logprobs[judgment.label], NEVER))
    return chosen, [(label, max(lp, NEVER)) for label, lp in ranked[: top or 0]]


def judgelab_field(judgment: Judgment, labels: Sequence[str], ignored: list[str]) -> dict[str, object]:
    """The extra ``judgelab`` field of a chat or generate response."""
    return {
        "label": judgment.label,
        "probability": judgment.probability,
        "probabilities": judgment.probabilities,
        "labels": list(labels),
        "ignored": ignored,
    }
