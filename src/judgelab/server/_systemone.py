"""TypeSafe's System One API: ``POST /v1/systemone`` and ``GET /v1/models``.

The wire format is the one the ``typesafe-sdk`` client sends and reads:
``{"model", "state", "questions": {name: {"type", "instructions", "criteria"}}}``
in, ``{"model", "answers": {name: {"type": "noul", "noul": p}}, "usage":
{"input_tokens", "output_tokens"}}`` out. ``noul`` is P(yes); choice and score
answers carry the distribution (``judgelab.questions``). Box questions and
image assets need a vision model and are refused.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgelab import __version__
from judgelab.errors import JudgelabError
from judgelab.server._batching import BatcherClosedError
from judgelab.server._errors import APIError, from_judgelab_error
from judgelab.server._http import parse_body
from judgelab.server._openai import model_entries
from judgelab.server._queued import guarded
from judgelab.server._state import JudgeState
from judgelab.wire import ask_systemone

__all__ = ["register", "router"]

router = APIRouter()

Content = str | dict[str, object] | list[object]


class NoulCriteria(BaseModel):
    model_config = ConfigDict(extra="forbid")
    true: Content | None = None
    false: Content | None = None


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["noul", "choice", "score", "box"]
    instructions: Content | None = None
    criteria: object = None

    @model_validator(mode="after")
    def _check(self) -> "Question":
        if self.type == "noul":
            if self.criteria is not None:
                self.criteria = NoulCriteria.model_validate(self.criteria)
            criteria = self.criteria
            described = isinstance(criteria, NoulCriteria) and (criteria.true is not None or criteria.false is not None)
            if self.instructions is None and not described:
                raise ValueError("a noul question needs instructions or criteria.true / criteria.false")
        elif self.type in ("choice", "score") and not self.criteria:
            raise ValueError(f"a {self.type} question needs non-empty criteria")
        return self


class SystemOneBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    model: str | None = None
    state: Content
    questions: dict[str, Question] = Field(min_length=1)
    assets: dict[str, object] | None = None


@router.post("/v1/systemone", response_model=None)
async def system_one(request: Request) -> dict[str, object]:
    body = await parse_body(request, SystemOneBody)
    state: JudgeState = request.app.state.judge
    state.check_model(body.model)
    if body.assets:
        raise APIError(400, "Image assets are not supported: a judgelab judge reads text only.",
                       code="unsupported_assets", param="assets")
    for name, q in body.questions.items():
        if q.type == "box":
            raise APIError(400, f"Question {name!r} is a box question; locating boxes needs a vision model.",
                           code="unsupported_question", param=f"questions.{name}.type")
    try:
        ticket = state.ticket()
        asking = run_in_threadpool(ask_systemone, state.queued.for_request(ticket), body.state, body.questions)
        answers, input_tokens = await guarded(request, ticket, asking)
    except BatcherClosedError as exc:
        raise APIError(503, str(exc), code="shutting_down") from exc
    except JudgelabError as exc:
        raise from_judgelab_error(exc, param="state") from exc
    return {
        "model": state.model.id,
        "answers": answers,
        "usage": {"input_tokens": input_tokens, "output_tokens": len(answers)},
    }


@router.get("/v1/models", response_model=None)
async def models(request: Request) -> dict[str, object]:
    """Both shapes at once: OpenAI's ``data`` and TypeSafe's ``models``."""
    state: JudgeState = request.app.state.judge
    spec = state.model.spec
    return {
        "object": "list",
        "data": model_entries(state),
        "models": [
            {"name": name, "description": spec.description or spec.id, "release_date": ""}
            for name in state.names
        ],
        "judgelab": {"version": __version__, "labels": list(state.labels)},
    }


def register(app: FastAPI) -> None:
    """Serve TypeSafe's /v1/systemone and /v1/models on ``app``."""
    app.include_router(router)
