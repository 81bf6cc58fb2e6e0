"""The app factory: one model, many protocols, one queue.

Each protocol lives in its own module that exposes ``router`` and
``register(app)``; adding a protocol is one line in ``PROTOCOLS``. A module that adds a capability
(reported by ``/api/show``) appends it to ``app.state.judge.capabilities``
in its ``register``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from fastapi import FastAPI

from judgelab import __version__
from judgelab.engine import BackendJudgeModel
from judgelab.server import _decisions, _evaluate, _ollama, _openai, _ops, _systemone, _tokenize
from judgelab.server._config import ServerConfig
from judgelab.server._errors import install_error_handlers
from judgelab.server._evaluate import ServedEvaluatorBuilder, registered_factories
from judgelab.server._middleware import AuthAndMetrics
from judgelab.server._policy import bind_factories
from judgelab.server._state import JudgeState

__all__ = ["create_app", "PROTOCOLS"]

log = logging.getLogger(__name__)

PROTOCOLS = (_ops, _ollama, _openai, _systemone, _evaluate, _decisions, _tokenize)
"""The modules whose ``register(app)`` adds their endpoints, in order."""


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    log.info("shutting down: finishing queued judgments")
    app.state.judge.close()


def create_app(
    model: BackendJudgeModel,
    config: ServerConfig | None = None,
    *,
    evaluators: Mapping[str, ServedEvaluatorBuilder] | None = None,
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
    app = FastAPI(
        title="judgelab",
        version=__version__,
        description=f"judge model {model.id}",
        lifespan=_lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    config = config or ServerConfig()
    factories: dict[str, ServedEvaluatorBuilder] = {**registered_factories(), **(evaluators or {})}
    policy_names: list[str] = []
    if config.policy is not None:  # refused here, before any worker starts, when it is not this judge's
        factories, policy_names = bind_factories(config.policy, model, factories, custom=set(evaluators or {}))
    app.state.judge = JudgeState(model, config)
    app.state.judge.policy_evaluators = policy_names
    app.state.evaluators = factories
    install_error_handlers(app)
    app.add_middleware(AuthAndMetrics)
    for protocol in PROTOCOLS:
        protocol.register(app)
    app.state.routes = {route.path for protocol in PROTOCOLS for route in protocol.router.routes}
    return app
