"""System One questions answered with ``judgelab.questions`` (noul, choice, score).

Translates the wire questions into ``Noul`` / ``Choice`` / ``Score``, asks
them all at once with ``ask_all`` (questions over one state share its prefix;
each label set is one batch on the worker) and writes the answers in the wire
format.
"""

from __future__ import annotations

import json
from typing import Any

from judgelab import questions as q
from judgelab.errors import JudgelabError
from judgelab.questions import QuestionModel
from judgelab.server._errors import APIError, from_judgelab_error

__all__ = ["answer_questions"]


def _text(value: Any) -> str | None:
    """Text for instructions or a criterion: strings as they are, JSON otherwise."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _typed(name: str, wire: Any) -> q.Question:
    """The ``judgelab.questions`` object for one wire question."""
    if wire.type == "noul":
        criteria = wire.criteria
        return q.Noul(
            instructions=_text(wire.instructions),
            when_true=_text(criteria.true) if criteria else None,
            when_false=_text(criteria.false) if criteria else None,
        )
    if wire.type == "choice":
        if not isinstance(wire.criteria, dict):
            raise APIError(400, f"questions.{name}.criteria must map each choice name to a description or null.",
                           param=f"questions.{name}.criteria")
        return q.Choice(
            instructions=_text(wire.instructions) or "Which of the options applies?",
            options={label: _text(desc) or "" for label, desc in wire.criteria.items()},
        )
    if wire.type == "score":
        if not isinstance(wire.criteria, list):
            raise APIError(400, f"questions.{name}.criteria must be a list of level descriptions, level 0 first.",
                           param=f"questions.{name}.criteria")
        return q.Score(
            instructions=_text(wire.instructions) or "Which level applies?",
            levels=[_text(level) or "" for level in wire.criteria],
        )
    raise APIError(400, f"Question {name!r} has unsupported type {wire.type!r}.", param=f"questions.{name}.type")


def _wire_answer(wire: Any, answer: q.Answer) -> dict[str, Any]:
    if isinstance(answer, q.NoulAnswer):
        return {"type": "noul", "noul": answer.probability}
    if isinstance(answer, q.ChoiceAnswer):
        return {"type": "choice", "choice": answer.choice, "confidence": answer.confidence,
                "probabilities": dict(answer.probabilities)}
    probs = list(answer.probabilities)
    return {
        "type": "score",
        "score": answer.expected,
        "confidence": max(probs),
        "legend": {str(i): level for i, level in enumerate(wire.criteria)},
        "probabilities": {str(i): p for i, p in enumerate(probs)},
    }


def answer_questions(model: QuestionModel, state: Any, questions: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Wire answers by question name, and the prompt tokens they took.

    Blocking (runs ``model.judge_many``); call it from a worker thread.
    """
    mapping = state if isinstance(state, dict) else {"state": state}
    typed = {}
    for name, wire in questions.items():
        try:
            typed[name] = _typed(name, wire)
        except JudgelabError as exc:
            raise from_judgelab_error(exc, param=f"questions.{name}") from exc
    results = q.ask_all(model, [(mapping, t) for t in typed.values()], return_exceptions=True)
    answers: dict[str, Any] = {}
    tokens = 0
    for (name, wire), result in zip(questions.items(), results):
        if isinstance(result, JudgelabError):
            raise from_judgelab_error(result, param=f"questions.{name}")
        answers[name] = _wire_answer(wire, result)
        tokens += result.prompt_tokens
    return answers, tokens
