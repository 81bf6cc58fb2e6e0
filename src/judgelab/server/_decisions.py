"""OpenAI's Decisions API: ``POST /v1/decisions``, answered with ``judgelab.questions``.

The wire format is the one the official ``openai`` client (3.57) sends and
parses (``openai/types/decision_create_params.py`` and ``decision.py``)::

    {"model", "input": str | [message | tool call | tool output],
     "questions": [{"type": "predicate" | "choice" | "score", "name"?,
                    "instructions", "choices"? | "levels"?}]}

in, and ``{"model", "answers": [...], "usage": {...}}`` out, answers in
question order. The translation to typed questions:

- the input becomes the state ``{"input": text}``; a single user message (or
  a string) is its text as it is, a longer conversation is written out as
  ``Role: text`` blocks, and system / developer messages become the judge's
  system prompt (as on ``/v1/chat/completions``);
- ``predicate`` -> ``Noul(instructions)``; its answer's ``probability`` is P(yes);
- ``choice`` -> ``Choice(instructions, {label: description})``; a boolean
  value is shown as ``true`` / ``false`` and answered with the boolean;
- ``score`` -> ``Score(instructions, ["label: description", ...])``; its
  ``score`` is the expected level index ``sum(i * p_i)``.

All questions go to ``ask_all`` at once, so questions over the one input share
its prefill. A question whose label words the model cannot read gets the
API's per-question ``refusal``; malformed requests get a 400 in OpenAI's error
shape, and an input longer than the context a 400 that says how many tokens it
had and how many fit. Image parts get a 400: a judgelab judge reads text only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from judgelab import questions as q
from judgelab.errors import ContextLengthError, JudgelabError
from judgelab.server._batching import BatcherClosedError
from judgelab.server._errors import APIError, from_judgelab_error, from_validation_error
from judgelab.server._http import read_json
from judgelab.server._queued import guarded
from judgelab.server._state import JudgeState

__all__ = ["router", "register", "MAX_QUESTIONS", "MAX_CHOICES", "CLIENT_DEFAULT_MODELS", "STATE_FIELD"]

router = APIRouter()

MAX_QUESTIONS = 400
"""The API's limit on questions per request ("Ask 1-400 questions")."""

MAX_CHOICES = q.MAX_CHOICE_OPTIONS
"""Options per choice question: judgelab reads at most ``questions.MAX_CHOICE_OPTIONS`` (letters A-Z); OpenAI allows 255."""

CLIENT_DEFAULT_MODELS = ("gpt-6-luna",)
"""Model names the Decisions clients send by default (Spring AI, the API docs); answered by the served model."""

STATE_FIELD = "input"
"""The state field that holds the request's input."""


# -- request ---------------------------------------------------------------------

_Loose = ConfigDict(extra="allow")


class _Part(BaseModel):
    """An input part: ``input_text``, ``input_json``, ``output_text``, ``refusal``, ``input_image``..."""

    model_config = _Loose
    type: StrictStr


class _Item(BaseModel):
    """One input item: a message, a function or custom tool call, or a tool output."""

    model_config = _Loose
    type: StrictStr = "message"
    role: Literal["user", "developer", "system", "assistant"] | None = None
    content: StrictStr | list[_Part] | None = None


class _Predicate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["predicate"]
    name: StrictStr | None = None
    instructions: StrictStr | list[_Part]


class _ChoiceOption(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: StrictStr | StrictBool
    description: StrictStr | None = None


class _Choice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["choice"]
    name: StrictStr | None = None
    instructions: StrictStr | list[_Part]
    choices: list[_ChoiceOption] = Field(min_length=2)


class _Level(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: StrictStr
    description: StrictStr | None = None


class _Score(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["score"]
    name: StrictStr | None = None
    instructions: StrictStr | list[_Part]
    levels: list[_Level]


_Question = Annotated[Union[_Predicate, _Choice, _Score], Field(discriminator="type")]


class DecisionBody(BaseModel):
    """``POST /v1/decisions``; the prompt-cache and safety fields are accepted and unused."""

    model_config = ConfigDict(extra="forbid")
    model: StrictStr
    input: StrictStr | list[_Item]
    questions: list[_Question]
    prompt_cache_key: StrictStr | None = None
    prompt_cache_options: dict[str, Any] | None = None
    safety_identifier: StrictStr | None = None


_UNION_TAGS = {"predicate", "choice", "score", "str", "bool", "list[_Part]", "function-after[_check(), str]"}


def _wire_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A pydantic error location as a request path: without union-member and tag names."""
    return tuple(p for p in loc if not (isinstance(p, str) and (p in _UNION_TAGS or "[" in p)))


async def parse_decision_body(request: Request) -> DecisionBody:
    """The request body as ``DecisionBody``; a 400 whose ``param`` is the field's path in the request."""
    data = await read_json(request, request.app.state.judge.config.max_body_bytes)
    if not isinstance(data, dict):
        raise APIError(400, f"Request body must be a JSON object, got {type(data).__name__}.", code="invalid_request")
    try:
        return DecisionBody.model_validate(data)
    except ValidationError as exc:
        error = from_validation_error(exc)
        first = exc.errors(include_url=False)[0]["loc"] if exc.error_count() else ()
        error.param = ".".join(str(p) for p in _wire_loc(tuple(first))) or None
        raise error from exc


# -- input -> state ----------------------------------------------------------------


def _part_text(part: _Part, param: str) -> str:
    data = part.model_dump()
    if part.type in ("input_text", "output_text", "text"):
        text = data.get("text")
        if not isinstance(text, str):
            raise APIError(400, f"{param}.text must be a string.", code="invalid_type", param=f"{param}.text")
        return text
    if part.type == "refusal":
        return str(data.get("refusal", ""))
    if part.type == "input_json":
        if "data" not in data:
            raise APIError(400, f"{param} is an input_json part without data.", code="invalid_request", param=f"{param}.data")
        return json.dumps(data["data"], ensure_ascii=False, indent=2)
    if part.type in ("input_image", "input_file", "input_audio"):
        raise APIError(
            400,
            f"{param} is an {part.type} part: the judge reads text only. Send text or input_json parts.",
            code="unsupported_content",
            param=param,
        )
    raise APIError(400, f"{param} has unknown part type {part.type!r}.", code="invalid_type", param=f"{param}.type")


def _content_text(content: str | list[_Part] | None, param: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(_part_text(part, f"{param}.{i}") for i, part in enumerate(content))


def _item_turn(item: _Item, param: str) -> tuple[str, str]:
    """``(role, text)`` of one input item."""
    data = item.model_dump()
    if item.type == "message":
        if item.role is None:
            raise APIError(400, f"{param}.role is missing: one of user, developer, system, assistant.",
                           code="invalid_request", param=f"{param}.role")
        return item.role, _content_text(item.content, f"{param}.content")
    if item.type in ("function_call", "custom_tool_call"):
        args = data.get("arguments", data.get("input", ""))
        return "tool call", f"{data.get('name', '')} ({data.get('call_id', '')}): {args}"
    if item.type in ("function_call_output", "custom_tool_call_output"):
        output = data.get("output", "")
        if isinstance(output, list):
            parts = [_Part.model_validate(p) if isinstance(p, dict) else p for p in output]
            output = _content_text(parts, f"{param}.output")
        return "tool output", f"({data.get('call_id', '')}): {output}"
    raise APIError(400, f"{param} has unknown item type {item.type!r}.", code="invalid_type", param=f"{param}.type")


def input_state(body_input: str | Sequence[_Item]) -> tuple[dict[str, str], str | None]:
    """The state ``{"input": text}`` and the system prompt (or ``None``) for a request's input."""
    if isinstance(body_input, str):
        return {STATE_FIELD: body_input}, None
    if not body_input:
        raise APIError(400, "input is an empty list; send a string or at least one message.",
                       code="invalid_request", param="input")
    turns = [_item_turn(item, f"input.{i}") for i, item in enumerate(body_input)]
    systems = [text for role, text in turns if role in ("system", "developer")]
    others = [(role, text) for role, text in turns if role not in ("system", "developer")]
    if not others:
        raise APIError(400, "input has only system or developer messages; add the content to judge.",
                       code="invalid_request", param="input")
    if len(others) == 1 and others[0][0] == "user":
        text = others[0][1]
    else:
        text = "\n\n".join(f"{role.capitalize()}: {t}" for role, t in others)
    return {STATE_FIELD: text}, ("\n\n".join(systems) if systems else None)


# -- questions -------------------------------------------------------------------


def _choice_label(value: str | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else value


def _check_questions(questions: Sequence[Any]) -> None:
    if not questions:
        raise APIError(400, "questions is empty; ask 1 to 400 questions.", code="invalid_request", param="questions")
    if len(questions) > MAX_QUESTIONS:
        raise APIError(400, f"{len(questions)} questions; the API allows at most {MAX_QUESTIONS} per request.",
                       code="too_many_questions", param="questions")
    seen: dict[str, int] = {}
    for i, question in enumerate(questions):
        if question.name is None:
            continue
        if question.name in seen:
            raise APIError(400, f"questions.{i}.name {question.name!r} is also the name of questions.{seen[question.name]}; "
                           "question names must be unique.", code="duplicate_question_name", param=f"questions.{i}.name")
        seen[question.name] = i

    for i, question in enumerate(questions):
        if isinstance(question, _Choice):
            n = len(question.choices)
            if n > MAX_CHOICES:
                raise APIError(400, f"questions.{i} has {n} choices; a judgelab judge reads at most {MAX_CHOICES} "
                               "(one letter each, A-Z). Split the question.", code="too_many_choices",
                               param=f"questions.{i}.choices")
            labels: dict[str, int] = {}
            for j, option in enumerate(question.choices):
                key = _choice_label(option.value).strip().lower()
                if key in labels:
                    raise APIError(400, f"questions.{i}.choices.{j} ({option.value!r}) repeats choices.{labels[key]} "
                                   "(choices must differ once case and the text of booleans are ignored).",
                                   code="duplicate_choice", param=f"questions.{i}.choices.{j}.value")
                labels[key] = j
        elif isinstance(question, _Score) and not 2 <= len(question.levels) <= q.MAX_LEVELS:
            raise APIError(400, f"questions.{i} has {len(question.levels)} levels; a score needs 2 to {q.MAX_LEVELS}.",
                           code="invalid_levels", param=f"questions.{i}.levels")


def typed_question(question: Any, param: str) -> q.Question:
    """The ``judgelab.questions`` question for one wire question."""
    instructions = _content_text(question.instructions, f"{param}.instructions")
    if isinstance(question, _Predicate):
        return q.Noul(instructions=instructions)
    if isinstance(question, _Choice):
        options = {_choice_label(c.value): c.description or "" for c in question.choices}
        return q.Choice(instructions=instructions, options=options)
    levels = [f"{lv.label}: {lv.description}" if lv.description else lv.label for lv in question.levels]
    return q.Score(instructions=instructions, levels=levels)


# -- answers ----------------------------------------------------------------------


def wire_answer(question: Any, answer: q.Answer) -> dict[str, Any]:
    """One answer in the ``openai.types.Decision`` shape."""
    if isinstance(answer, q.NoulAnswer):
        return {"type": "predicate", "name": question.name, "probability": answer.probability}
    if isinstance(answer, q.ChoiceAnswer):
        values = {_choice_label(c.value): c.value for c in question.choices}
        return {
            "type": "choice",
            "name": question.name,
            "choice": values[answer.choice],
            "confidence": answer.confidence,
            "probabilities": [{"value": values[label], "probability": p} for label, p in answer.probabilities.items()],
        }
    probs = list(answer.probabilities)
    return {
        "type": "score",
        "name": question.name,
        "score": answer.expected,
        "confidence": max(probs),
        "probabilities": [
            {"value": i, "label": level.label, "probability": p} for i, (level, p) in enumerate(zip(question.levels, probs))
        ],
    }


def answer_decisions(model: Any, body: DecisionBody) -> tuple[list[dict[str, Any]], int]:
    """Wire answers in question order and the prompt tokens they took (blocking: run it in a thread)."""
    state, system = input_state(body.input)
    typed = []
    for i, question in enumerate(body.questions):
        try:
            typed.append(typed_question(question, f"questions.{i}"))
        except JudgelabError as exc:
            raise from_judgelab_error(exc, param=f"questions.{i}") from exc
    results = q.ask_all(model, [(state, t) for t in typed], system=system, return_exceptions=True)
    answers: list[dict[str, Any]] = []
    tokens = 0
    for i, (question, result) in enumerate(zip(body.questions, results)):
        if isinstance(result, ContextLengthError):
            raise from_judgelab_error(result, param="input")
        if isinstance(result, JudgelabError):
            answers.append({"type": "refusal", "name": question.name, "reason": str(result)})
            continue
        answers.append(wire_answer(question, result))
        tokens += result.prompt_tokens
    return answers, tokens


@router.post("/v1/decisions")
async def decisions(request: Request):
    state: JudgeState = request.app.state.judge
    body = await parse_decision_body(request)
    if body.model.removesuffix(":latest") not in CLIENT_DEFAULT_MODELS:
        state.check_model(body.model, required=True)
    _check_questions(body.questions)
    try:
        ticket = state.ticket()
        asking = run_in_threadpool(answer_decisions, state.queued.for_request(ticket), body)
        answers, input_tokens = await guarded(request, ticket, asking)
    except BatcherClosedError as exc:
        raise APIError(503, str(exc), code="shutting_down") from exc
    except JudgelabError as exc:
        raise from_judgelab_error(exc, param="input") from exc
    output_tokens = sum(1 for a in answers if a["type"] != "refusal")
    return {
        "model": state.model.id,
        "answers": answers,
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def register(app: FastAPI) -> None:
    """Serve OpenAI's /v1/decisions on ``app``; the model then reports the ``decision`` capability.

    ``decision`` also covers ``/v1/systemone``: Spring AI's ``OllamaDecisionModel``
    checks ``/api/show`` for it before it asks there.
    """
    app.include_router(router)
    capabilities = app.state.judge.capabilities
    if "decision" not in capabilities:
        capabilities.append("decision")
