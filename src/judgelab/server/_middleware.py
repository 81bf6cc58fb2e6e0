"""API-key check, request ids and per-route metrics, as a plain ASGI middleware.

Plain ASGI (not Starlette's ``BaseHTTPMiddleware``) so that handlers receive
the server's own ``receive`` and see a client's disconnect as it happens.
"""

from __future__ import annotations

import time
import uuid

from fastapi import Request
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from judgelab.server._errors import APIError, error_response
from judgelab.server._http import check_auth

__all__ = ["AuthAndMetrics", "OPEN_PATHS"]

OPEN_PATHS = frozenset({"/healthz", "/", "/favicon.ico"})
"""Paths that never need the API key."""


class AuthAndMetrics:
    """Refuses requests without the API key (401), tags responses with a request id, counts them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        app: Starlette = scope["app"]
        state = app.state.judge
        route = scope["path"]
        request_id = _header(scope, b"x-request-id") or uuid.uuid4().hex
        status = 500

        async def send_tagged(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = MutableHeaders(scope=message)
                headers["x-request-id"] = request_id
                headers["x-typesafe-request-id"] = request_id
            await send(message)

        state.metrics.request_started()
        t0 = time.perf_counter()
        try:
            if route not in OPEN_PATHS:
                try:
                    check_auth(Request(scope), state.config.api_key)
                except APIError as exc:
                    await error_response(Request(scope), exc)(scope, receive, send_tagged)
                    return
            await self.app(scope, receive, send_tagged)
        finally:
            known = route if route in app.state.routes else "other"
            state.metrics.request_done(known, status, time.perf_counter() - t0)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            text: str = value.decode("latin-1")
            return text
    return None
