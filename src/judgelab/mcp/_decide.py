"""The ``decide`` tool's arguments and answers: the ``/v1/decisions`` question shapes, asked with ``ask_all``.

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
from judgelab.errors import ContextLengthError, JudgelabError, QuestionError

__all__ = ["Message", "Question", "answer_questions"]

STATE_FIELD = "input"
MAX_QUESTIONS = 400
MAX_CHOICES = 26


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


def _label(value: str | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else value


def input_state(value: str | Sequence[Message]) -> tuple[dict[str, str], str | None]:
    """The state ``{"input": text}`` and the system prompt for a string or a conversation."""
    if isinstance(value, str):
        return {STATE_FIELD: value}, None
    systems = [m.content for m in value if m.role in ("system", "developer")]
    others = [m for m in value if m.role not in ("system", "developer")]
    if not others:
        raise QuestionError("input has no user, assistant or tool message; add the content to judge.", name="input")
    if len(others) == 1 and others[0].role == "user":
        text = others[0].content
    else:
        text = "\n\n".join(f"{m.role.capitalize()}: {m.content}" for m in others)
    return {STATE_FIELD: text}, ("\n\n".join(systems) if systems else None)


def typed_question(question: Any, i: int) -> q.Question:
    """The ``judgelab.questions`` question for one argument question."""
    if isinstance(question, Predicate):
        return q.Noul(instructions=question.instructions)
    if isinstance(question, ChoiceQuestion):
        options = {_label(c.value): c.description or "" for c in question.choices}
        if len({k.strip().lower() for k in options}) != len(question.choices):
            raise QuestionError(f"questions[{i}] repeats a choice (choices must differ, ignoring case).",
                                name=f"questions[{i}].choices")
        return q.Choice(instructions=question.instructions, options=options)
    levels = [f"{lv.label}: {lv.description}" if lv.description else lv.label for lv in question.levels]
    return q.Score(instructions=question.instructions, levels=levels)


def wire_answer(question: Any, answer: q.Answer) -> dict[str, Any]:
    """One answer in the Decisions API's shape."""
    if isinstance(answer, q.NoulAnswer):
        return {"type": "predicate", "name": question.name, "probability": answer.probability}
    if isinstance(answer, q.ChoiceAnswer):
        values = {_label(c.value): c.value for c in question.choices}
        return {"type": "choice", "name": question.name, "choice": values[answer.choice],
                "confidence": answer.confidence,
                "probabilities": [{"value": values[k], "probability": p} for k, p in answer.probabilities.items()]}
    probs = list(answer.probabilities)
    return {"type": "score", "name": question.name, "score": answer.expected, "confidence": max(probs),
            "probabilities": [{"value": i, "label": lv.label, "probability": p}
                              for i, (lv, p) in enumerate(zip(question.levels, probs))]}


def answer_questions(model: Any, value: str | Sequence[Message], questions: Sequence[Any]) -> dict[str, Any]:
    """Ask every question about the input in one ``ask_all``; answers in question order.

    A question the model cannot answer (its label words) gets a ``refusal``
    answer naming why; an input longer than the context raises
    ``ContextLengthError``.
    """
    if not questions:
        raise QuestionError("questions is empty; ask 1 to 400 questions.", name="questions")
    if len(questions) > MAX_QUESTIONS:
        raise QuestionError(f"{len(questions)} questions; at most {MAX_QUESTIONS} per call.", name="questions")
    names = [x.name for x in questions if x.name is not None]
    if len(names) != len(set(names)):
        raise QuestionError("question names must be unique.", name="questions")
    state, system = input_state(value)
    typed = [typed_question(x, i) for i, x in enumerate(questions)]
    results = q.ask_all(model, [(state, t) for t in typed], system=system, return_exceptions=True)
    answers, tokens = [], 0
    for question, result in zip(questions, results):
        if isinstance(result, ContextLengthError):
            raise result
        if isinstance(result, JudgelabError):
            answers.append({"type": "refusal", "name": question.name, "reason": str(result)})
            continue
        answers.append(wire_answer(question, result))
        tokens += result.prompt_tokens
    return {"model": model.id, "answers": answers, "usage": {"input_tokens": tokens}}
