"""``judgelab mcp --http``: the MCP server over streamable HTTP, with ``judgelab serve``'s key and limits.

The SDK's streamable HTTP app is wrapped in an API-key check (``Authorization:
Bearer KEY``, from ``--api-key`` or ``$JUDGELAB_API_KEY``, compared in
constant time) and served by ``judgelab.server.serve`` with the same
connection limits (header timeout, keep-alive, connections, header size);
the body limit is the SDK's ``max_request_body_size`` set to
``--max-body-bytes``.
"""

from __future__ import annotations

import hmac
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

    from judgelab.server import ServerConfig

__all__ = ["ApiKeyGate", "http_app", "parse_host_port"]

MCP_PATH = "/mcp"
"""Where the streamable HTTP endpoint lives (the SDK's default)."""


def parse_host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a pair; ``ValueError`` naming the flag otherwise."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http must be HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:8765; got {text!r}")
    return host, int(port)


class ApiKeyGate:
    """ASGI middleware: 401 for HTTP requests without ``Authorization: Bearer <api_key>``."""

    def __init__(self, app: ASGIApp, api_key: str | None) -> None:
        self.app = app
        self.api_key = api_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.api_key is None or self._authorised(scope, self.api_key):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "Missing or wrong API key: send 'Authorization: Bearer KEY' "
                                    "(judgelab mcp --api-key or $JUDGELAB_API_KEY)."}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _authorised(scope: Scope, api_key: str) -> bool:
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), api_key.encode())
        return False


def http_app(server: MCPServer[object], config: ServerConfig, host: str) -> ApiKeyGate:
    """The SDK's streamable HTTP app for ``server``, behind the API key, with the body limit of ``config``."""
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, max_request_body_size=config.max_body_bytes,
                                     host=host)
    return ApiKeyGate(app, config.api_key)
