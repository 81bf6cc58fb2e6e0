"""The Ollama API: ``/api/chat``, ``/api/generate``, ``/api/tags``, ``/api/ps``, ``/api/show``, ``/api/version``.

A judge answers with greedy decoding restricted to its labels: the reply text
is exactly one label (at most ``num_predict`` tokens; unset, ``--num-predict``
(default 2) or as many as the longest label takes, "GRADE: C" being 3). Sampling
options and fields a judge has no use for (``format``, ``keep_alive``,
``tools``, ``think``, images...) are accepted and ignored; the response's
extra ``judgelab`` field, which Ollama clients ignore, holds the label's
probability, the whole distribution and the names of the ignored fields.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from judgelab import __version__
from judgelab.engine import Judgment, ModelInfo
from judgelab.server._answers import answer_label, judgelab_field, label_logprobs
from judgelab.server._errors import APIError
from judgelab.server._http import parse_body
from judgelab.server._policy import policy_extra
from judgelab.server._prompts import chat_prompt
from judgelab.server._state import JudgeState
from judgelab.server._weights_file import WeightsFile, weights_file

__all__ = ["register", "router"]

router = APIRouter()

# Options that a judge honours; every other option is reported as ignored.
_USED_OPTIONS = {"num_predict"}
_USED_FIELDS = {"model", "messages", "prompt", "system", "raw", "stream", "options", "logprobs", "top_logprobs", "labels"}


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: object = ""


class _Common(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1)
    stream: bool = True
    options: dict[str, object] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    labels: list[str] | None = Field(None, description="judgelab extension: the labels to answer with")


class ChatBody(_Common):
    messages: list[_Message] = Field(default_factory=list)


class GenerateBody(_Common):
    prompt: str = ""
    system: str | None = None
    raw: bool = False


def _ignored(body: _Common) -> list[str]:
    data = body.model_dump(exclude_none=True)
    ignored = [k for k, v in data.items() if k not in _USED_FIELDS and v not in ([], {}, "")]
    ignored += [f"options.{k}" for k, v in (body.options or {}).items() if k not in _USED_OPTIONS and v is not None]
    return sorted(ignored)


def _num_predict(state: JudgeState, body: _Common, labels: Sequence[str]) -> int | None:
    """The request's ``num_predict``; unset: ``--num-predict``, or the longest label's tokens when that is more."""
    value = (body.options or {}).get("num_predict")
    if value is None:
        return max(state.config.default_num_predict, state.label_tokens(labels))
    if not isinstance(value, int) or isinstance(value, bool):
        raise APIError(400, f"options.num_predict must be an integer, got {value!r}.", param="options.num_predict")
    if value == 0:
        raise APIError(400, "options.num_predict is 0: no room for a label; use 2 or more.", param="options.num_predict")
    return None if value < 0 else value  # -1 / -2: no limit


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _logprobs(j: Judgment, top: int | None) -> list[dict[str, object]]:
    (label, logprob), ranked = label_logprobs(j, top)
    entry: dict[str, object] = {"token": label, "logprob": logprob}
    if top:
        entry["top_logprobs"] = [{"token": t, "logprob": lp} for t, lp in ranked]
    return [entry]


async def _judge(request: Request, body: _Common, prompt: str, kind: str) -> tuple[Judgment, dict[str, object]]:
    state: JudgeState = request.app.state.judge
    name = state.check_model(body.model)
    labels = state.resolve_labels(body.labels)
    t0 = time.perf_counter_ns()
    judgment, n_out = await answer_label(request, prompt, labels, _num_predict(state, body, labels), param=kind)
    elapsed = time.perf_counter_ns() - t0
    final: dict[str, object] = {
        "model": body.model or name,
        "created_at": _now(),
        "done": True,
        "done_reason": "stop",
        "total_duration": elapsed,
        "load_duration": 0,
        "prompt_eval_count": judgment.prompt_tokens,
        "prompt_eval_duration": elapsed,
        "eval_count": n_out,
        "eval_duration": 0,
    }
    if body.logprobs:
        final["logprobs"] = _logprobs(judgment, body.top_logprobs)
    final["judgelab"] = {**judgelab_field(judgment, labels, _ignored(body)), **policy_extra(state)}
    return judgment, final


def _respond(body: _Common, final: dict[str, object], text_field: str, text: str) -> JSONResponse | StreamingResponse:
    def piece(value: str) -> object:
        return {"role": "assistant", "content": value} if text_field == "message" else value

    if not body.stream:
        return JSONResponse({**final, text_field: piece(text)})
    first = {"model": final["model"], "created_at": final["created_at"], text_field: piece(text), "done": False}
    if "logprobs" in final:
        first["logprobs"] = final.pop("logprobs")
    last = {**final, text_field: piece("")}

    def lines() -> Iterator[str]:
        yield json.dumps(first) + "\n"
        yield json.dumps(last) + "\n"

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@router.post("/api/chat", response_model=None)
async def chat(request: Request) -> JSONResponse | StreamingResponse:
    body = await parse_body(request, ChatBody)
    state: JudgeState = request.app.state.judge
    state.check_model(body.model)
    prompt = chat_prompt(state.model, body.messages)
    judgment, final = await _judge(request, body, prompt, "messages")
    return _respond(body, final, "message", judgment.label)


@router.post("/api/generate", response_model=None)
async def generate(request: Request) -> JSONResponse | StreamingResponse:
    body = await parse_body(request, GenerateBody)
    state: JudgeState = request.app.state.judge
    name = state.check_model(body.model)
    if not body.prompt.strip():
        # Ollama answers an empty prompt by loading the model; ours is always loaded.
        return JSONResponse({"model": body.model or name, "created_at": _now(), "response": "",
                             "done": True, "done_reason": "load"})
    prompt = body.prompt if body.raw else state.model.render(body.prompt, system=body.system)
    judgment, final = await _judge(request, body, prompt, "prompt")
    return _respond(body, final, "response", judgment.label)


def _details(info: ModelInfo) -> dict[str, object]:
    return {
        "parent_model": "",
        "format": info.format,
        "family": info.family,
        "families": [info.family],
        "parameter_size": info.parameter_size,
        "quantization_level": info.quantization,
    }


def _weights(request: Request) -> WeightsFile:
    app_state = request.app.state
    if getattr(app_state, "weights_file", None) is None:
        app_state.weights_file = weights_file(app_state.judge.model)
    found: WeightsFile = app_state.weights_file
    return found


async def _listed(request: Request) -> list[dict[str, object]]:
    """Every served name as Ollama lists a model: the weights' file size and full sha256 digest."""
    state: JudgeState = request.app.state.judge
    modified = datetime.fromtimestamp(state.metrics.started, timezone.utc).isoformat().replace("+00:00", "Z")
    info = state.model.info()
    weights = _weights(request)
    digest = await weights.digest()
    return [{"name": f"{name}:latest", "model": f"{name}:latest", "modified_at": modified, "size": weights.size,
             "digest": digest, "details": _details(info), "capabilities": list(state.capabilities)}
            for name in state.names]


@router.get("/api/tags", response_model=None)
async def tags(request: Request) -> dict[str, object]:
    return {"models": await _listed(request)}


@router.get("/api/ps", response_model=None)
async def ps(request: Request) -> dict[str, object]:
    """The loaded models (one, under each name it answers to): always loaded, never expiring."""
    models = await _listed(request)
    for m in models:
        m.pop("modified_at", None)
        m.update(expires_at="9999-12-31T23:59:59Z", size_vram=0, context_length=request.app.state.judge.model.info().n_ctx)
    return {"models": models}


class ShowBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str | None = None
    name: str | None = None  # older clients


@router.post("/api/show", response_model=None)
async def show(request: Request) -> dict[str, object]:
    body = await parse_body(request, ShowBody)
    state: JudgeState = request.app.state.judge
    state.check_model(body.model or body.name, required=True)
    info = state.model.info()  # the engine's public facts, not the backend's internals
    return {
        "license": "",
        "modelfile": f"# served by judgelab {__version__}\nFROM {info.id}\n",
        "parameters": f"num_predict {state.config.default_num_predict}\ntemperature 0",
        "template": info.prompt_template,
        "system": info.system,
        "details": _details(info),
        "model_info": {
            "general.architecture": info.architecture or info.family,
            "general.name": info.id,
            f"{info.architecture or info.family}.context_length": info.n_ctx,
        },
        "capabilities": list(state.capabilities),
        "modified_at": datetime.fromtimestamp(state.metrics.started, timezone.utc).isoformat().replace("+00:00", "Z"),
        "judgelab": {"labels": list(state.labels), "description": info.description},
    }


@router.get("/api/version", response_model=None)
async def version() -> dict[str, str]:
    return {"version": __version__}


def register(app: FastAPI) -> None:
    """Serve Ollama's /api/* endpoints on ``app``."""
    app.include_router(router)
