"""The app factory: one model, many protocols, one queue."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from judgelab import __version__
from judgelab.engine import JudgeModel
from judgelab.server import _evaluate, _ollama, _openai, _systemone
from judgelab.server._config import ServerConfig
from judgelab.server._errors import APIError, error_response
from judgelab.server._evaluate import DEFAULT_EVALUATORS, EvaluatorFactory
from judgelab.server._http import check_auth
from judgelab.server._state import JudgeState

__all__ = ["create_app"]

log = logging.getLogger(__name__)

_OPEN_PATHS = {"/healthz", "/", "/favicon.ico"}


def create_app(
    model: JudgeModel,
    config: ServerConfig | None = None,
    *,
    evaluators: Mapping[str, EvaluatorFactory] | None = None,
) -> FastAPI:
    """A FastAPI app serving ``model`` over judgelab's, Ollama's, OpenAI's and TypeSafe's APIs.

    Parameters
    ----------
    model
        A loaded model. The app's worker thread judges with it; the caller
        keeps ownership (the app does not close it).
    config
        Server behaviour; defaults to ``ServerConfig()``.
    evaluators
        Extra ``/v1/evaluate`` evaluators by name (e.g. criteria evaluators),
        added to fact-checking, bespoke-minicheck and relevancy.
    """
    config = config or ServerConfig()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        log.info("shutting down: finishing queued judgments")
        app.state.judge.close()

    app = FastAPI(
        title="judgelab",
        version=__version__,
        description=f"judge model {model.id}",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.judge = JudgeState(model, config)
    app.state.evaluators = {**DEFAULT_EVALUATORS, **(evaluators or {})}

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError):
        return error_response(request, exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404:
            message = f"No endpoint {request.method} {request.url.path}; see docs/server.md for the endpoints."
        elif exc.status_code == 405:
            message = f"Method {request.method} is not allowed on {request.url.path}."
        else:
            message = str(exc.detail)
        return error_response(request, APIError(exc.status_code, message, code="not_found" if exc.status_code == 404 else None))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        return error_response(request, APIError(400, f"Invalid request: {exc.errors()}", code="invalid_request"))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(request, APIError(500, f"Internal error: {type(exc).__name__}: {exc}", code="internal_error"))

    @app.middleware("http")
    async def _auth_and_metrics(request: Request, call_next):
        state: JudgeState = request.app.state.judge
        route = request.url.path
        request_id = request.headers.get("x-request-id") or uuid.uuid4().hex
        state.metrics.request_started()
        t0 = time.perf_counter()
        status = 500
        try:
            if route not in _OPEN_PATHS:
                try:
                    check_auth(request, config.api_key)
                except APIError as exc:
                    response = error_response(request, exc)
                    status = response.status_code
                    return response
            response = await call_next(request)
            status = response.status_code
            response.headers["x-request-id"] = request_id
            response.headers["x-typesafe-request-id"] = request_id
            return response
        finally:
            known = route if route in request.app.state.routes else "other"
            state.metrics.request_done(known, status, time.perf_counter() - t0)

    @app.get("/healthz")
    async def healthz(request: Request):
        state: JudgeState = request.app.state.judge
        return {"status": "ok", "model": state.model.id, "queued": state.batcher.pending}

    @app.get("/")
    async def root():  # Ollama clients probe "/"
        return PlainTextResponse("judgelab is running")

    @app.get("/metrics")
    async def metrics(request: Request, format: str = "json"):
        state: JudgeState = request.app.state.judge
        if format == "prometheus" or "text/plain" in request.headers.get("accept", ""):
            return PlainTextResponse(state.metrics.prometheus(state.model.id))
        return JSONResponse({"model": state.model.id, **state.metrics.snapshot()})

    for module in (_ollama, _openai, _systemone, _evaluate):
        app.include_router(module.router)
    app.state.routes = {"/healthz", "/metrics"} | {
        route.path for module in (_ollama, _openai, _systemone, _evaluate) for route in module.router.routes
    }
    return app
