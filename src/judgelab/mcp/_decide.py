"""The ``decide`` tool's arguments: the ``/v1/decisions`` question shapes, asked through ``judgelab.wire``.

Questions are ``judgelab.wire.DecisionQuestion``: the models ``judgelab serve``'s
``/v1/decisions`` validates with too (OpenAI's Decisions API shape, the same
constraints and refusals); what is MCP's own is the transport: the input is
a string or a list of ``{"role", "content"}`` messages. The answers
have that API's shapes: a predicate's ``probability`` is P(yes), a choice has
its ``choice``, ``confidence`` and per-option probabilities, a score its
expected level index and per-level probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judgelab.engine import JudgeModel
from judgelab.wire import DecisionQuestion, ask_decisions

__all__ = ["Message", "Question", "answer_questions"]


class Message(BaseModel):
    """One turn of a conversation to judge (MCP's transport; the server takes OpenAI's input items instead).

    ``tool`` is a role here because a tool's output has no item of its own in this shape (the server's
    ``function_call_output`` items); it becomes a ``Tool: text`` turn, as the server's become ``Tool output``.
    """

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "system", "developer", "tool"] = Field(
        description="Who said it; system and developer turns become the judge's system prompt.")
    content: str = Field(description="What was said (text).")


Question = DecisionQuestion
"""One question of ``decide``: ``judgelab.wire.DecisionQuestion``, the model ``/v1/decisions`` validates with."""


def answer_questions(model: JudgeModel, value: str | Sequence[Message],
                     questions: Sequence[DecisionQuestion]) -> dict[str, object]:
    """Ask every question about the input in one ``ask_all`` (``judgelab.wire.ask_decisions``); answers in order.

    A question the model cannot answer (its label words) gets a ``refusal``
    answer naming why; a question the API refuses raises ``WireError``; an
    input longer than the context raises ``ContextLengthError``.
    """
    turns = value if isinstance(value, str) else [(m.role, m.content) for m in value]
    answers, tokens = ask_decisions(model, turns, questions)
    return {"model": model.id, "answers": answers, "usage": {"input_tokens": tokens}}
