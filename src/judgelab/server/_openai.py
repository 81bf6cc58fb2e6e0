"""The OpenAI API: ``/v1/chat/completions`` (with logprobs, streaming).

The reply is exactly one label, chosen by greedy decoding restricted to the
labels. ``logprobs``/``top_logprobs`` come from the label distribution: each
label counts as one "token" whose log-probability is the log of its
probability restricted to the labels. Sampling parameters are accepted and
ignored; the response's extra ``judgelab`` field names them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from judgelab.engine import Judgment
from judgelab.server._answers import answer_label, judgelab_field, label_logprobs
from judgelab.server._errors import APIError
from judgelab.server._graders import inspect_label_warning, promptfoo_rubric, rubric_answer, warn_once
from judgelab.server._http import parse_body
from judgelab.server._policy import policy_extra
from judgelab.server._prompts import chat_prompt
from judgelab.server._state import JudgeState

__all__ = ["register", "router", "model_entries"]

router = APIRouter()

_USED = {"model", "messages", "max_tokens", "max_completion_tokens", "logprobs", "top_logprobs",
         "stream", "stream_options", "n", "labels"}


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: object = None


class CompletionBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1)
    messages: list[_Message] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    stream: bool | None = False
    stream_options: dict[str, object] | None = None
    n: int | None = Field(None, ge=1, le=1, description="a judge has one greedy answer")
    labels: list[str] | None = Field(None, description="judgelab extension: the labels to answer with")


def _ignored(body: CompletionBody) -> list[str]:
    data = body.model_dump(exclude_none=True)
    return sorted(k for k in data if k not in _USED)


def _entry(token: str, logprob: float) -> dict[str, object]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def _logprobs(j: Judgment, top: int | None) -> dict[str, object]:
    (label, logprob), ranked = label_logprobs(j, top)
    entry = _entry(label, logprob)
    entry["top_logprobs"] = [_entry(t, lp) for t, lp in ranked]
    return {"content": [entry], "refusal": None}


def model_entries(state: JudgeState) -> list[dict[str, object]]:
    """``/v1/models`` entries, OpenAI's shape."""
    created = int(state.metrics.started)
    return [{"id": name, "object": "model", "created": created, "owned_by": "judgelab"} for name in state.names]


@router.post("/v1/chat/completions", response_model=None)
async def chat_completions(request: Request) -> StreamingResponse | dict[str, object]:
    body = await parse_body(request, CompletionBody)
    state: JudgeState = request.app.state.judge
    state.check_model(body.model)
    rubric = promptfoo_rubric(body.messages) if body.labels is None else None
    if rubric is not None:  # promptfoo's llm-rubric grader: the JSON it parses, score = P(pass)
        return await _rubric_reply(request, body, *rubric)
    labels = state.resolve_labels(body.labels)
    if body.top_logprobs and not body.logprobs:
        raise APIError(400, "top_logprobs needs logprobs: true.", param="top_logprobs")
    prompt = chat_prompt(state.model, body.messages)
    max_tokens = body.max_completion_tokens or body.max_tokens
    judgment, n_out = await answer_label(request, prompt, labels, max_tokens, param="messages")
    warning = inspect_label_warning(body.messages, labels)
    if warning:
        warn_once(warning, labels)
    usage = {
        "prompt_tokens": judgment.prompt_tokens,
        "completion_tokens": n_out,
        "total_tokens": judgment.prompt_tokens + n_out,
    }
    reply = _Reply(
        common={"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": body.model,
                "system_fingerprint": state.model.spec.spec_hash},
        label=judgment.label,
        logprobs=_logprobs(judgment, body.top_logprobs) if body.logprobs else None,
        usage=usage,
        extra={**judgelab_field(judgment, labels, _ignored(body)), **policy_extra(state),
               **({"warnings": [warning]} if warning else {})},
    )
    if not body.stream:
        return reply.completion()
    include_usage = bool((body.stream_options or {}).get("include_usage"))
    return StreamingResponse(reply.events(include_usage), media_type="text/event-stream")


async def _rubric_reply(request: Request, body: CompletionBody, output: str, rubric: str,
                        ) -> StreamingResponse | dict[str, object]:
    """The completion whose text is promptfoo's grading JSON (``_graders.rubric_answer``)."""
    text, extra = await rubric_answer(request, output, rubric)
    reply = _Reply(
        common={"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": body.model,
                "system_fingerprint": request.app.state.judge.model.spec.spec_hash},
        label=text, logprobs=None, usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}, extra=extra,
    )
    if body.stream:
        return StreamingResponse(reply.events(bool((body.stream_options or {}).get("include_usage"))),
                                 media_type="text/event-stream")
    return reply.completion()


@dataclass(frozen=True)
class _Reply:
    """One answered completion, written whole or as server-sent events."""

    common: dict[str, object]
    label: str
    logprobs: dict[str, object] | None
    usage: dict[str, int]
    extra: dict[str, object]

    def completion(self) -> dict[str, object]:
        return {
            **self.common,
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": self.label, "refusal": None},
                "logprobs": self.logprobs,
                "finish_reason": "stop",
            }],
            "usage": self.usage,
            "judgelab": self.extra,
        }

    def events(self, include_usage: bool) -> Iterator[str]:
        def chunk(delta: dict[str, object], finish: str | None = None, lp: object = None, **more: object) -> str:
            payload = {**self.common, "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": delta, "logprobs": lp, "finish_reason": finish}], **more}
            if include_usage:
                payload.setdefault("usage", None)
            return f"data: {json.dumps(payload)}\n\n"

        yield chunk({"role": "assistant", "content": ""})
        yield chunk({"content": self.label}, lp=self.logprobs)
        yield chunk({}, "stop", judgelab=self.extra)
        if include_usage:
            last = {**self.common, "object": "chat.completion.chunk", "choices": [], "usage": self.usage}
            yield f"data: {json.dumps(last)}\n\n"
        yield "data: [DONE]\n\n"


def register(app: FastAPI) -> None:
    """Serve OpenAI's /v1/chat/completions on ``app``."""
    app.include_router(router)
