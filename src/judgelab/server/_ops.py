"""Operations endpoints: ``GET /healthz``, ``GET /metrics`` and ``GET /``."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from judgelab.server._state import JudgeState

__all__ = ["router", "register"]

router = APIRouter()


@router.get("/healthz", response_model=None)
async def healthz(request: Request) -> dict[str, object]:
    state: JudgeState = request.app.state.judge
    return {"status": "ok", "model": state.model.id, "queued": state.batcher.pending}


@router.get("/")
async def root() -> PlainTextResponse:  # Ollama clients probe "/"
    return PlainTextResponse("judgelab is running")


@router.get("/metrics", response_model=None)
async def metrics(request: Request, format: str = "json") -> JSONResponse | PlainTextResponse:
    state: JudgeState = request.app.state.judge
    if format == "prometheus" or "text/plain" in request.headers.get("accept", ""):
        return PlainTextResponse(state.metrics.prometheus(state.model.id))
    return JSONResponse({"model": state.model.id, **state.metrics.snapshot()})


def register(app: FastAPI) -> None:
    """Serve the operations endpoints on ``app``."""
    app.include_router(router)
