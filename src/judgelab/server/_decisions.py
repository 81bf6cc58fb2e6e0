"""OpenAI's Decisions API: ``POST /v1/decisions``, answered with ``judgelab.questions``.

The wire format is the one the official ``openai`` client (3.57) sends and
parses (``openai/types/decision_create_params.py`` and ``decision.py``)::

    {"model", "input": str | [message | tool call | tool output],
     "questions": [{"type": "predicate" | "choice" | "score", "name"?,
                    "instructions", "choices"? | "levels"?}]}

in, and ``{"model", "answers": [...], "usage": {...}}`` out, answers in
question order. This module owns the request body's transport fields
(pydantic; the questions are ``judgelab.wire.DecisionQuestion``, declared once
for this API and MCP's ``decide``) and the input items (messages, tool calls
and their outputs, written out as ``Role: text`` turns); checking the questions, the translation to typed questions and back,
and asking them are ``judgelab.wire.ask_decisions``'s, shared with MCP's
``decide``. Malformed requests get a 400 in OpenAI's error shape (a
``WireError``'s field and code), and an input longer than the context a 400
that says how many tokens it had and how many fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, StrictStr, ValidationError

from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError
from judgelab.server._batching import BatcherClosedError
from judgelab.server._errors import APIError, from_judgelab_error, from_validation_error
from judgelab.server._http import read_json
from judgelab.server._queued import guarded
from judgelab.server._state import JudgeState
from judgelab.wire import (
    MAX_CHOICES,
    MAX_QUESTIONS,
    STATE_FIELD,
    DecisionPart,
    DecisionQuestion,
    WireError,
    ask_decisions,
    check_decision_questions,
    content_text,
    decision_state,
)

__all__ = ["router", "register", "MAX_QUESTIONS", "MAX_CHOICES", "CLIENT_DEFAULT_MODELS", "STATE_FIELD"]

router = APIRouter()

CLIENT_DEFAULT_MODELS = ("gpt-6-luna",)
"""Model names the Decisions clients send by default (Spring AI, the API docs); answered by the served model."""


# -- request ---------------------------------------------------------------------

_Loose = ConfigDict(extra="allow")


class _Item(BaseModel):
    """One input item: a message, a function or custom tool call, or a tool output."""

    model_config = _Loose
    type: StrictStr = "message"
    role: Literal["user", "developer", "system", "assistant"] | None = None
    content: StrictStr | list[DecisionPart] | None = None


class DecisionBody(BaseModel):
    """``POST /v1/decisions``; the prompt-cache and safety fields are accepted and unused."""

    model_config = ConfigDict(extra="forbid")
    model: StrictStr
    input: StrictStr | list[_Item]
    questions: list[DecisionQuestion]
    prompt_cache_key: StrictStr | None = None
    prompt_cache_options: dict[str, object] | None = None
    safety_identifier: StrictStr | None = None


_UNION_TAGS = {"predicate", "choice", "score", "str", "bool", "function-after[_check(), str]"}


def _wire_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
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


# -- input -> turns ----------------------------------------------------------------


def _item_turn(item: _Item, param: str) -> tuple[str, str]:
    """``(role, text)`` of one input item: a message, a tool call or a tool output."""
    data = item.model_dump()
    if item.type == "message":
        if item.role is None:
            raise APIError(400, f"{param}.role is missing: one of user, developer, system, assistant.",
                           code="invalid_request", param=f"{param}.role")
        return item.role, content_text(item.content, param=f"{param}.content")
    if item.type in ("function_call", "custom_tool_call"):
        args = data.get("arguments", data.get("input", ""))
        return "tool call", f"{data.get('name', '')} ({data.get('call_id', '')}): {args}"
    if item.type in ("function_call_output", "custom_tool_call_output"):
        output = data.get("output", "")
        if isinstance(output, list):
            output = content_text(output, param=f"{param}.output")
        return "tool output", f"({data.get('call_id', '')}): {output}"
    raise APIError(400, f"{param} has unknown item type {item.type!r}.", code="invalid_type", param=f"{param}.type")


def input_turns(body_input: str | Sequence[_Item]) -> str | list[tuple[str, str]]:
    """The request's input as ``judgelab.wire.ask_decisions`` takes it: a string, or ``(role, text)`` turns."""
    if isinstance(body_input, str):
        return body_input
    return [_item_turn(item, f"input.{i}") for i, item in enumerate(body_input)]


def input_state(body_input: str | Sequence[_Item]) -> tuple[dict[str, str], str | None]:
    """The state ``{"input": text}`` and the system prompt (or ``None``) for a request's input."""
    return decision_state(input_turns(body_input))


def answer_decisions(model: JudgeModel, body: DecisionBody) -> tuple[list[dict[str, object]], int]:
    """Wire answers in question order and the prompt tokens they took (blocking: run it in a thread)."""
    try:
        return ask_decisions(model, input_turns(body.input), body.questions)
    except JudgelabError as exc:
        raise from_judgelab_error(exc, param="input") from exc


@router.post("/v1/decisions", response_model=None)
async def decisions(request: Request) -> dict[str, object]:
    state: JudgeState = request.app.state.judge
    body = await parse_decision_body(request)
    if body.model.removesuffix(":latest") not in CLIENT_DEFAULT_MODELS:
        state.check_model(body.model, required=True)
    try:
        check_decision_questions(body.questions)
    except WireError as exc:
        raise from_judgelab_error(exc) from exc
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
