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
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from judgelab.engine import Judgment
from judgelab.server._errors import APIError
from judgelab.server._http import parse_body
from judgelab.server._queued import guarded
from judgelab.server._prompts import chat_prompt, message_text
from judgelab.server._state import JudgeState

__all__ = ["router", "model_entries"]

router = APIRouter()

_USED = {"model", "messages", "max_tokens", "max_completion_tokens", "logprobs", "top_logprobs",
         "stream", "stream_options", "n", "labels"}


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: Any = None


class CompletionBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1)
    messages: list[_Message] = Field(min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    stream: bool | None = False
    stream_options: dict[str, Any] | None = None
    n: int | None = Field(None, ge=1, le=1, description="a judge has one greedy answer")
    labels: list[str] | None = Field(None, description="judgelab extension: the labels to answer with")


def _ignored(body: CompletionBody) -> list[str]:
    data = body.model_dump(exclude_none=True)
    return sorted(k for k in data if k not in _USED)


def _entry(token: str, logprob: float) -> dict[str, Any]:
    lp = max(logprob, -9999.0)
    return {"token": token, "logprob": lp, "bytes": list(token.encode("utf-8"))}


def _logprobs(j: Judgment, top: int | None) -> dict[str, Any]:
    ranked = sorted(j.logprobs.items(), key=lambda kv: -kv[1])
    entry = _entry(j.label, j.logprobs[j.label])
    entry["top_logprobs"] = [_entry(t, lp) for t, lp in ranked[: top or 0]]
    return {"content": [entry], "refusal": None}


def model_entries(state: JudgeState) -> list[dict[str, Any]]:
    """``/v1/models`` entries, OpenAI's shape."""
    created = int(state.metrics.started)
    return [{"id": name, "object": "model", "created": created, "owned_by": "judgelab"} for name in state.names]


@router.post("/v1/chat/completions")
async def chat_completions(request: Request):
    body = await parse_body(request, CompletionBody)
    state: JudgeState = request.app.state.judge
    state.check_model(body.model)
    labels = state.resolve_labels(body.labels)
    if body.top_logprobs and not body.logprobs:
        raise APIError(400, "top_logprobs needs logprobs: true.", param="top_logprobs")
    messages = [
        (m.role, message_text(m.content, param=f"messages.{i}.content")) for i, m in enumerate(body.messages)
    ]
    prompt = chat_prompt(state.model, messages)
    max_tokens = body.max_completion_tokens or body.max_tokens
    ticket = state.ticket()
    judgment, n_out = await guarded(request, ticket, state.answer(prompt, labels, max_tokens, ticket, param="messages"))
    state.metrics.add_output_tokens(n_out)
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    usage = {
        "prompt_tokens": judgment.prompt_tokens,
        "completion_tokens": n_out,
        "total_tokens": judgment.prompt_tokens + n_out,
    }
    logprobs = _logprobs(judgment, body.top_logprobs) if body.logprobs else None
    extra = {
        "label": judgment.label,
        "probability": judgment.probability,
        "probabilities": judgment.probabilities,
        "labels": list(labels),
        "ignored": _ignored(body),
    }
    common = {"id": completion_id, "created": created, "model": body.model,
              "system_fingerprint": state.model.spec.spec_hash}
    if not body.stream:
        return {
            **common,
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": judgment.label, "refusal": None},
                "logprobs": logprobs,
                "finish_reason": "stop",
            }],
            "usage": usage,
            "judgelab": extra,
        }
    include_usage = bool((body.stream_options or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None, lp: Any = None, **more: Any) -> str:
        payload = {**common, "object": "chat.completion.chunk",
                   "choices": [{"index": 0, "delta": delta, "logprobs": lp, "finish_reason": finish}], **more}
        if include_usage:
            payload.setdefault("usage", None)
        return f"data: {json.dumps(payload)}\n\n"

    def events():
        yield chunk({"role": "assistant", "content": ""})
        yield chunk({"content": judgment.label}, lp=logprobs)
        yield chunk({}, "stop", judgelab=extra)
        if include_usage:
            yield f"data: {json.dumps({**common, 'object': 'chat.completion.chunk', 'choices': [], 'usage': usage})}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")
