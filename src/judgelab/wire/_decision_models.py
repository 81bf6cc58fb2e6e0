"""The Decisions question models, declared once: ``/v1/decisions`` and MCP's ``decide`` validate with these.

A question is ``{"type": "predicate" | "choice" | "score", "name"?, "instructions", "choices"? | "levels"?}``,
as OpenAI's Decisions API has it (the ``openai`` client's ``decision_create_params``). The server adds
only its transport (the request body: ``model``, OpenAI's input items, the cache and safety fields), MCP
only its own (the tool's arguments: a string or ``{role, content}`` messages, 1 to 400 questions).

Which constraints live where, and why (one place each, the same for both transports):

- **the shape** (types, required fields, a choice's 2 options at least, no unknown fields) is the model's:
  a string where the API has a string (``StrictStr``: ``5`` is not an instruction), a boolean where it has
  a boolean (``StrictBool``: ``1`` is not ``true``), instructions as text or text parts as the API allows;
- **judgelab's limits** (at most ``MAX_CHOICES`` options, 2 to ``MAX_LEVELS`` levels, 1 to 400 questions,
  unique names, options distinct once case is ignored, instructions that say something) are checked by
  ``check_decision_questions`` and ``decision_question``, each with its own ``WireError`` code and the
  field at fault, for both transports; the schema still shows the limits (``maxItems``...) so that a tool
  caller reads them before it asks.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from judgelab import questions as q

__all__ = [
    "MAX_CHOICES", "DecisionChoiceOption", "DecisionChoiceQuestion", "DecisionLevel", "DecisionPart",
    "DecisionPredicate", "DecisionQuestion", "DecisionScoreQuestion",
]

MAX_CHOICES = q.MAX_CHOICE_OPTIONS
"""Options per choice question: judgelab reads at most ``questions.MAX_CHOICE_OPTIONS`` (letters A-Z); OpenAI allows 255."""

_Closed = ConfigDict(extra="forbid")


class DecisionPart(BaseModel):
    """A content part: ``input_text`` / ``text`` / ``output_text``, ``input_json``, ``refusal``; images are refused later."""

    model_config = ConfigDict(extra="allow")
    type: StrictStr


class DecisionChoiceOption(BaseModel):
    """One option of a choice question: its ``value`` and optional ``description``."""

    model_config = _Closed
    value: StrictStr | StrictBool = Field(description="The option (a string, or true/false).")
    description: StrictStr | None = Field(None, description="What the option means.")


class DecisionLevel(BaseModel):
    """One level of a score question, lowest first: its ``label`` and optional ``description``."""

    model_config = _Closed
    label: StrictStr = Field(description="The level's name, lowest level first.")
    description: StrictStr | None = Field(None, description="What the level means.")


class _Question(BaseModel):
    model_config = _Closed
    name: StrictStr | None = Field(None, description="Optional name, echoed in the answer.")
    instructions: StrictStr | list[DecisionPart] = Field(
        description="The question, about the input (e.g. 'Is the answer polite?'): text, or text parts.")


class DecisionPredicate(_Question):
    """A yes/no question; answered with P(yes)."""

    type: Literal["predicate"]


class DecisionChoiceQuestion(_Question):
    """Pick one of 2 to 26 options; answered with a probability per option."""

    type: Literal["choice"]
    choices: list[DecisionChoiceOption] = Field(min_length=2, json_schema_extra={"maxItems": MAX_CHOICES})


class DecisionScoreQuestion(_Question):
    """An ordered scale of 2 to 10 levels; answered with the expected level index and per-level probabilities."""

    type: Literal["score"]
    levels: list[DecisionLevel] = Field(json_schema_extra={"minItems": 2, "maxItems": q.MAX_LEVELS})


DecisionQuestion = Annotated[
    Union[DecisionPredicate, DecisionChoiceQuestion, DecisionScoreQuestion], Field(discriminator="type")]
"""One Decisions question (the ``type`` field picks the model)."""
