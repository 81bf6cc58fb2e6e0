"""``judgelab mcp``: the judge as Model Context Protocol tools (docs/mcp.md).

Tools: ``fact_check``, ``check_relevancy``, ``decide`` (the ``/v1/decisions``
question shapes), ``evaluate`` (any registered evaluator) and ``list_models``;
over stdio (what MCP hosts launch) or streamable HTTP with ``judgelab
serve``'s API key and limits. Judgments go through the same queue as
``judgelab serve``, so concurrent calls share one model.

Needs the official MCP Python SDK, the ``mcp`` extra: ``pip install
'judgelab[mcp]'``. Importing this package does not import the SDK; building
a server without it raises ``BackendUnavailableError`` with that hint.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from judgelab.errors import BackendUnavailableError
from judgelab.mcp._http import MCP_PATH, parse_host_port
from judgelab.mcp._judge import McpJudge

if TYPE_CHECKING:  # the SDK is imported only when a server is made
    from mcp.server.mcpserver import MCPServer

__all__ = ["INSTALL_HINT", "MCP_PATH", "McpJudge", "create_mcp_server", "parse_host_port", "run_http", "run_stdio",
           "tool_names"]

INSTALL_HINT = "pip install 'judgelab[mcp]'"


def _server_module() -> ModuleType:
    try:
        from judgelab.mcp import _server
    except ImportError as exc:
        raise BackendUnavailableError(
            f"judgelab mcp needs the MCP Python SDK (mcp >= 2.3), which is not installed ({exc}). "
            f"Install it with: {INSTALL_HINT}",
            backend="mcp",
            extra="mcp",
        ) from exc
    return _server


def create_mcp_server(judge: McpJudge) -> MCPServer[object]:
    """An ``mcp.server.MCPServer`` with judgelab's tools over ``judge``."""
    server: MCPServer[object] = _server_module().create_mcp_server(judge)
    return server


def tool_names() -> tuple[str, ...]:
    """The tools the server offers."""
    names: tuple[str, ...] = _server_module().TOOL_NAMES
    return names


def run_stdio(judge: McpJudge) -> None:
    """Serve over stdin/stdout until the client closes them (what MCP hosts launch)."""
    import anyio

    server = create_mcp_server(judge)
    try:
        anyio.run(server.run_stdio_async)
    finally:
        judge.close()


def run_http(judge: McpJudge, host: str, port: int, *, log_level: str = "warning") -> None:
    """Serve over streamable HTTP at ``http://HOST:PORT/mcp`` until SIGINT/SIGTERM."""
    from judgelab.mcp._http import http_app
    from judgelab.server import serve

    app = http_app(create_mcp_server(judge), judge.config, host)
    try:
        serve(app, host=host, port=port, log_level=log_level, limits=judge.config)
    finally:
        judge.close()
