"""The ``decide`` tool's arguments: the ``/v1/decisions`` question shapes, asked through ``judgelab.wire``.

Questions are ``{"type": "predicate" | "choice" | "score", "name"?, "instructions", "choices"? | "levels"?}``
as in OpenAI's Decisions API (and ``judgelab serve``'s ``/v1/decisions``); the
input is a string or a list of ``{"role", "content"}`` messages. The answers
have that API's shapes: a predicate's ``probability`` is P(yes), a choice has
its ``choice``, ``confidence`` and per-option probabilities, a score its
expected level index and per-level probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from judgelab import questions as q
from judgelab.engine import JudgeModel
from judgelab.wire import MAX_CHOICES, ask_decisions

__all__ = ["Message", "Question", "answer_questions"]


class Message(BaseModel):
    """One turn of a conversation to judge."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "system", "developer", "tool"] = Field(
        description="Who said it; system and developer turns become the judge's system prompt.")
    content: str = Field(description="What was said (text).")


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, description="Optional name, echoed in the answer.")
    instructions: str = Field(min_length=1, description="The question, about the input (e.g. 'Is the answer polite?').")


class Predicate(_Base):
    """A yes/no question; answered with P(yes)."""

    type: Literal["predicate"]


class ChoiceOption(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: str | bool = Field(description="The option (a string, or true/false).")
    description: str | None = Field(None, description="What the option means.")


class ChoiceQuestion(_Base):
    """Pick one of 2 to 26 options; answered with a probability per option."""

    type: Literal["choice"]
    choices: list[ChoiceOption] = Field(min_length=2, max_length=MAX_CHOICES)


class Level(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(description="The level's name, lowest level first.")
    description: str | None = Field(None, description="What the level means.")


class ScoreQuestion(_Base):
    """An ordered scale of 2 to 10 levels; answered with the expected level index and per-level probabilities."""

    type: Literal["score"]
    levels: list[Level] = Field(min_length=2, max_length=q.MAX_LEVELS)


Question = Annotated[Union[Predicate, ChoiceQuestion, ScoreQuestion], Field(discriminator="type")]
"""One question of ``decide``."""


def answer_questions(model: JudgeModel, value: str | Sequence[Message], questions: Sequence[Any]) -> dict[str, Any]:
    """Ask every question about the input in one ``ask_all`` (``judgelab.wire.ask_decisions``); answers in order.

    A question the model cannot answer (its label words) gets a ``refusal``
    answer naming why; a question the API refuses raises ``WireError``; an
    input longer than the context raises ``ContextLengthError``.
    """
    turns = value if isinstance(value, str) else [(m.role, m.content) for m in value]
    answers, tokens = ask_decisions(model, turns, questions)
    return {"model": model.id, "answers": answers, "usage": {"input_tokens": tokens}}
