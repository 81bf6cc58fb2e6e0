"""Rendering a state and a question into the text of one user turn.

The state comes first and the question last, so every question asked over
the same state shares the state's tokens as a prompt prefix (and the engine
computes them once).
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence

from judgelab.errors import QuestionError
from judgelab.questions._types import Choice, Noul, Question, Score

__all__ = [
    "check_state",
    "choice_reads_letters",
    "choice_tokens",
    "render_question",
    "render_state",
    "render_user_turn",
]

_LETTERS = string.ascii_uppercase


def check_state(state: object) -> Mapping[str, object]:
    """``state`` if it is a mapping with non-blank string keys; ``QuestionError`` otherwise."""
    if not isinstance(state, Mapping):
        raise QuestionError(
            f"A state must be a mapping of field names to values, got {type(state).__name__}."
        )
    for key in state:
        if not isinstance(key, str) or not key.strip():
            raise QuestionError(f"State field names must be non-blank strings, got {key!r}.")
    return state


def _value_text(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        if not value:
            return "(none)"
        return "\n".join(f"[{i}] {_item_text(v)}" for i, v in enumerate(value, start=1))
    return _json(value)


def _item_text(value: object) -> str:
    return value.strip() if isinstance(value, str) else _json(value)


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return str(value)


def render_state(state: Mapping[str, object]) -> str:
    """The state's fields in order, each under its name in backticks."""
    check_state(state)
    blocks = [f"`{name}`:\n{_value_text(value)}" for name, value in state.items()]
    return "\n\n".join(blocks)


def choice_reads_letters(choice: Choice, labels_are_single_tokens: bool) -> bool:
    """Whether ``choice`` is read from letters (else from its labels)."""
    if choice.letters is not None:
        return choice.letters
    return not labels_are_single_tokens


def choice_tokens(choice: Choice, letters: bool) -> tuple[str, ...]:
    """The words whose tokens are read for ``choice``."""
    return tuple(_LETTERS[: len(choice.options)]) if letters else choice.labels


def render_question(question: Question, *, letters: bool = False) -> str:
    """The question text placed after the state."""
    if isinstance(question, Noul):
        lines = [f"Question: {question.instructions}"] if question.instructions else []
        if question.when_true:
            lines.append(f"Answer Yes if: {question.when_true}")
        if question.when_false:
            lines.append(f"Answer No if: {question.when_false}")
        if question.when_true and not question.when_false:
            lines.append("Otherwise answer No.")
        elif question.when_false and not question.when_true:
            lines.append("Otherwise answer Yes.")
        lines.append("Answer Yes or No.")
        return "\n".join(lines)
    if isinstance(question, Choice):
        words = choice_tokens(question, letters)
        lines = [f"Question: {question.instructions}", "Options:"]
        for word, (label, description) in zip(words, question.options.items()):
            head = f"{word}) {label}" if letters else label
            lines.append(f"{head}: {description}" if description else head)
        lines.append(f"Answer with one of: {', '.join(words)}.")
        return "\n".join(lines)
    if isinstance(question, Score):
        lines = [f"Question: {question.instructions}", "Levels:"]
        lines += [f"{i}: {d}" for i, d in enumerate(question.levels)]
        lines.append(f"Answer with the level number, 0 to {len(question.levels) - 1}.")
        return "\n".join(lines)
    raise QuestionError(
        f"Not a typed question: {type(question).__name__}. Use Noul, Choice or Score."
    )


def render_user_turn(state: Mapping[str, object], question: Question, *, letters: bool = False) -> str:
    """State, then question: the user turn of one question's prompt."""
    return f"{render_state(state)}\n\n{render_question(question, letters=letters)}"
