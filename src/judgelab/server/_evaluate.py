"""judgelab's own API: ``POST /v1/evaluate`` and ``POST /v1/evaluate/batch``.

The body names an evaluator and carries Spring AI's ``EvaluationRequest``
fields; the answer is the ``EvaluationResponse`` as JSON. Evaluators run on a
``QueuedModel``, so concurrent evaluations are batched on the one model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError
from judgelab.evaluators import Document, EvaluationRequest, Evaluator, build_evaluator, evaluate_many, evaluator_names
from judgelab.server._batching import BatcherClosedError
from judgelab.server._errors import APIError, from_judgelab_error
from judgelab.server._http import parse_body
from judgelab.server._queued import RequestTicket, guarded
from judgelab.server._state import JudgeState

__all__ = ["register", "router", "ServedEvaluatorBuilder", "evaluate_requests", "registered_factories"]

router = APIRouter()

ServedEvaluatorBuilder = Callable[[JudgeModel, float], Evaluator]
"""Builds a served evaluator for a model and a request's pass threshold (``create_app(evaluators=...)``).

Not ``judgelab.calibration.EvaluatorFactory``, the picklable recipe a
distributed calibration ships to its replicas.
"""

def registered_factories() -> dict[str, ServedEvaluatorBuilder]:
    """``{name: factory}`` for every evaluator in the one registry (``judgelab.evaluators``), at this moment."""

    def factory(name: str) -> ServedEvaluatorBuilder:
        return lambda model, threshold: build_evaluator(name, model, threshold=threshold)

    return {name: factory(name) for name in evaluator_names()}


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    metadata: dict[str, object] = Field(default_factory=dict)


class RequestBody(BaseModel):
    """Spring AI's ``EvaluationRequest`` fields."""

    model_config = ConfigDict(extra="forbid")
    user_text: str
    data_list: list[str | _Doc] = Field(default_factory=list)
    response_content: str = ""

    def to_request(self) -> EvaluationRequest:
        docs = [Document(d) if isinstance(d, str) else Document(d.text, d.metadata) for d in self.data_list]
        return EvaluationRequest(self.user_text, docs, self.response_content)


class EvaluateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    evaluator: str
    request: RequestBody
    threshold: float = Field(0.5, ge=0.0, le=1.0)
    model: str | None = None


class EvaluateBatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    evaluator: str
    requests: list[RequestBody] = Field(min_length=1)
    threshold: float = Field(0.5, ge=0.0, le=1.0)
    model: str | None = None


def _evaluator(request: Request, name: str, threshold: float, ticket: RequestTicket) -> Evaluator:
    state: JudgeState = request.app.state.judge
    factories: Mapping[str, ServedEvaluatorBuilder] = request.app.state.evaluators
    factory = factories.get(name)
    if factory is None:
        raise APIError(
            404,
            f"Unknown evaluator {name!r}; this server has: {', '.join(sorted(factories))}.",
            code="evaluator_not_found",
            param="evaluator",
        )
    try:
        # QueuedModel is a JudgeModel (the engine's protocol) whose judging runs on the batcher
        return factory(state.queued.for_request(ticket), threshold)
    except JudgelabError as exc:
        raise from_judgelab_error(exc, param="evaluator") from exc


async def evaluate_requests(request: Request, name: str, threshold: float,
                            requests: list[EvaluationRequest]) -> list[dict[str, object]]:
    """Evaluate in a pool thread (chunking long documents there, not on the worker); 499 if the client leaves."""
    ticket: RequestTicket = request.app.state.judge.ticket()
    evaluator = _evaluator(request, name, threshold, ticket)
    try:
        responses = await guarded(request, ticket, run_in_threadpool(evaluate_many, evaluator, requests))
    except BatcherClosedError as exc:
        raise APIError(503, str(exc), code="shutting_down") from exc
    except JudgelabError as exc:
        raise from_judgelab_error(exc, param="request") from exc
    return [r.to_dict() for r in responses]


@router.post("/v1/evaluate", response_model=None)
async def evaluate(request: Request) -> dict[str, object]:
    body = await parse_body(request, EvaluateBody)
    request.app.state.judge.check_model(body.model)
    return (await evaluate_requests(request, body.evaluator, body.threshold, [body.request.to_request()]))[0]


@router.post("/v1/evaluate/batch", response_model=None)
async def evaluate_batch(request: Request) -> dict[str, object]:
    body = await parse_body(request, EvaluateBatchBody)
    request.app.state.judge.check_model(body.model)
    return {"responses": await evaluate_requests(request, body.evaluator, body.threshold, [r.to_request() for r in body.requests])}


def register(app: FastAPI) -> None:
    """Serve /v1/evaluate and /v1/evaluate/batch on ``app``."""
    app.include_router(router)
