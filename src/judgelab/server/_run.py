"""Running the app with uvicorn: in the foreground (the CLI) or in a thread (tests, notebooks)."""

from __future__ import annotations

import logging
import threading
import time

import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.types import ASGIApp

from judgelab.server._config import ServerConfig
from judgelab.server._protocol import header_timeout_protocol

__all__ = ["serve", "ServerThread"]

log = logging.getLogger(__name__)


def _uvicorn_config(
    app: ASGIApp, host: str, port: int, log_level: str, graceful_s: float | None, limits: ServerConfig | None = None,
) -> uvicorn.Config:
    """uvicorn's settings, with the connection limits of ``limits`` (default: the app's ``ServerConfig``)."""
    if limits is None:
        if not isinstance(app, Starlette):
            raise TypeError(f"serve() needs limits=ServerConfig(...) for an app that is not create_app's, got {type(app).__name__}")
        limits = app.state.judge.config
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=log_level == "debug",
        timeout_graceful_shutdown=graceful_s,  # type: ignore[arg-type]  # uvicorn waits float seconds (asyncio)
        lifespan="on",
        http=header_timeout_protocol(limits.header_timeout_s),
        timeout_keep_alive=limits.keep_alive_timeout_s,  # type: ignore[arg-type]  # ... and so here (call_later)
        limit_concurrency=limits.max_connections,
        h11_max_incomplete_event_size=limits.max_header_bytes,
    )


def serve(
    app: ASGIApp, *, host: str = "127.0.0.1", port: int = 11434, log_level: str = "info",
    graceful_s: float | None = None, limits: ServerConfig | None = None,
) -> None:
    """Serve ``app`` until SIGINT/SIGTERM; in-flight requests finish before exit.

    ``graceful_s`` bounds the wait for in-flight requests (``None``: no bound).
    ``limits`` gives the connection limits (header timeout, keep-alive,
    connections, header size) for an ASGI app that is not ``create_app``'s
    (``judgelab mcp --http``); by default they are the app's ``ServerConfig``.
    """
    uvicorn.Server(_uvicorn_config(app, host, port, log_level, graceful_s, limits)).run()


class ServerThread:
    """A uvicorn server for ``app`` in a background thread.

    ``start()`` returns once the server accepts connections; ``stop()`` shuts
    it down gracefully (in-flight requests finish, the queue drains).
    """

    def __init__(self, app: FastAPI, *, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning") -> None:
        self.server = uvicorn.Server(_uvicorn_config(app, host, port, log_level, None))
        self.thread = threading.Thread(target=self.server.run, name="judgelab-uvicorn", daemon=True)
        self.host = host

    @property
    def port(self) -> int:
        sockets = [s for server in self.server.servers for s in server.sockets]
        port: int = sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 60.0) -> "ServerThread":
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.host} within {timeout} s")
            time.sleep(0.02)
        return self

    def stop(self, timeout: float = 60.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
