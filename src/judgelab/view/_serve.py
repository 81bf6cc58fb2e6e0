"""Serving the viewer: the address checks (loopback unless allowed, a free port) and uvicorn.

A non-loopback ``host`` exposes the run files and the corrections form to the network, so it is
refused unless the caller both allows it and sets an API key. A port that is taken is one line
naming it and what to do, before uvicorn starts.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import socket
import threading
import time

import uvicorn
from fastapi import FastAPI

from judgelab.errors import JudgelabError, ParameterError

__all__ = ["ViewServer", "check_address", "check_port", "is_loopback"]

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_address(host: str, *, allow_remote: bool, api_key: str | None) -> None:
    """Refuse a non-loopback ``host`` unless ``allow_remote`` and an API key are both given.

    Raises
    ------
    ParameterError
        Naming the flags to add (or to drop).
    """
    if is_loopback(host):
        return
    if not allow_remote:
        raise ParameterError(f"--host {host} is not a loopback address: the viewer would show the run's rows and take "
                             "label corrections from the network. Use --host 127.0.0.1, or add --allow-remote and "
                             "--api-key KEY.")
    if not api_key:
        raise ParameterError(f"--host {host} with --allow-remote needs an API key: pass --api-key KEY (or set "
                             "JUDGELAB_API_KEY); browsers then open /?key=KEY once.")


def check_port(host: str, port: int) -> None:
    """Bind ``host:port`` for a moment; a ``JudgelabError`` of one line when it is taken or not allowed."""
    if not 0 <= port <= 65535:
        raise ParameterError(f"--port must be between 0 and 65535, got {port}.")
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a listener still refuses
        try:
            sock.bind((host.strip("[]"), port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise JudgelabError(f"port {port} on {host} is already in use (another judgelab view or server?); "
                                    "choose another with --port N, or --port 0 for a free one.") from exc
            raise JudgelabError(f"cannot listen on {host}:{port}: {exc.strerror or exc}.") from exc


class ViewServer:
    """uvicorn serving the viewer app, in the foreground (``run``) or a background thread (``start``)."""

    def __init__(self, app: FastAPI, *, host: str = "127.0.0.1", port: int = 8765, log_level: str = "warning") -> None:
        self.host = host
        self.server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level,
                                                    access_log=log_level == "debug", lifespan="off"))
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        sockets = [s for server in self.server.servers for s in server.sockets]
        port: int = sockets[0].getsockname()[1]
        return port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        """Serve until SIGINT/SIGTERM."""
        self.server.run()

    def start(self, timeout: float = 30.0) -> "ViewServer":
        """Serve in a daemon thread; returns once connections are accepted."""
        self.thread = threading.Thread(target=self.server.run, name="judgelab-view", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise JudgelabError(f"judgelab view did not start on {self.host} within {timeout} s.")
            time.sleep(0.02)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout)
