"""TypeSafe's System One questions to typed questions and back (``/v1/systemone``).

A wire question is ``{"type": "noul" | "choice" | "score", "instructions",
"criteria"}`` by name: ``noul`` -> ``Noul`` (criteria ``true`` / ``false`` as
its descriptions), ``choice`` -> ``Choice`` (criteria: option -> description),
``score`` -> ``Score`` (criteria: level descriptions, level 0 first). They are
asked all at once with ``ask_all`` (questions over one state share its prefix)
and answered in the wire shape: ``{"type": "noul", "noul": P(yes)}``, a
choice's distribution, a score's expected level, legend and distribution.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol, TypeVar, cast, runtime_checkable

from judgelab import questions as q
from judgelab.errors import JudgelabError
from judgelab.wire._errors import WireError

__all__ = ["SystemOneNoulCriteria", "SystemOneQuestion", "ask_systemone", "systemone_answer", "systemone_question"]


@runtime_checkable
class SystemOneNoulCriteria(Protocol):
    """A noul question's criteria: what ``true`` and what ``false`` mean (either may be ``None``)."""

    @property
    def true(self) -> object: ...
    @property
    def false(self) -> object: ...


class SystemOneQuestion(Protocol):
    """What the translation reads of the server's question model.

    ``criteria`` depends on ``type``: ``SystemOneNoulCriteria`` or ``None``
    for a noul, a mapping of option -> description for a choice, a list of
    level descriptions for a score.
    """

    @property
    def type(self) -> str: ...
    @property
    def instructions(self) -> object: ...
    @property
    def criteria(self) -> object: ...


_C = TypeVar("_C")


def _text(value: object) -> str | None:
    """Text for instructions or a criterion: strings as they are, JSON otherwise."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2)


def _criteria(wire: SystemOneQuestion, kind: type[_C], name: str, must: str) -> _C:
    """``wire.criteria`` when it is a ``kind``; a ``WireError`` saying what it must be otherwise."""
    if not isinstance(wire.criteria, kind):
        raise WireError(f"questions.{name}.criteria must {must}.", param=f"questions.{name}.criteria",
                        code="invalid_request")
    return wire.criteria


def systemone_question(name: str, wire: SystemOneQuestion) -> q.Question:
    """The ``judgelab.questions`` question for the wire question ``name``."""
    if wire.type == "noul":
        criteria = wire.criteria if isinstance(wire.criteria, SystemOneNoulCriteria) else None
        return q.Noul(
            instructions=_text(wire.instructions),
            when_true=_text(criteria.true) if criteria else None,
            when_false=_text(criteria.false) if criteria else None,
        )
    if wire.type == "choice":
        options = _criteria(wire, dict, name, "map each choice name to a description or null")
        return q.Choice(instructions=_text(wire.instructions) or "Which of the options applies?",
                        options={label: _text(desc) or "" for label, desc in options.items()})
    if wire.type == "score":
        levels = _criteria(wire, list, name, "be a list of level descriptions, level 0 first")
        return q.Score(instructions=_text(wire.instructions) or "Which level applies?",
                       levels=[_text(level) or "" for level in levels])
    raise WireError(f"Question {name!r} has unsupported type {wire.type!r}.", param=f"questions.{name}.type",
                    code="invalid_request")


def systemone_answer(wire: SystemOneQuestion, answer: q.Answer) -> dict[str, object]:
    """One answer in the System One shape."""
    if isinstance(answer, q.NoulAnswer):
        return {"type": "noul", "noul": answer.probability}
    if isinstance(answer, q.ChoiceAnswer):
        return {"type": "choice", "choice": answer.choice, "confidence": answer.confidence,
                "probabilities": dict(answer.probabilities)}
    probs = list(answer.probabilities)
    levels = cast("list[object]", wire.criteria)  # a score's criteria: systemone_question refused any other
    return {
        "type": "score",
        "score": answer.expected,
        "confidence": max(probs),
        "legend": {str(i): level for i, level in enumerate(levels)},
        "probabilities": {str(i): p for i, p in enumerate(probs)},
    }


def ask_systemone(
    model: q.QuestionModel, state: object, questions: Mapping[str, SystemOneQuestion],
) -> tuple[dict[str, object], int]:
    """Wire answers by question name, and the prompt tokens they took.

    Blocking (the model judges); run it in a worker thread. A question that
    cannot be asked or answered raises ``WireError`` naming it
    (``questions.NAME``), chained to the judgelab error behind it.
    """
    mapping = state if isinstance(state, dict) else {"state": state}
    typed = {}
    for name, wire in questions.items():
        try:
            typed[name] = systemone_question(name, wire)
        except WireError:
            raise
        except JudgelabError as exc:
            raise WireError(str(exc), param=f"questions.{name}", code=type(exc).__name__) from exc
    results = q.ask_all(model, [(mapping, t) for t in typed.values()], return_exceptions=True)
    answers: dict[str, object] = {}
    tokens = 0
    for (name, wire), result in zip(questions.items(), results):
        if isinstance(result, JudgelabError):
            raise WireError(str(result), param=f"questions.{name}", code=type(result).__name__) from result
        answers[name] = systemone_answer(wire, result)
        tokens += result.prompt_tokens
    return answers, tokens
