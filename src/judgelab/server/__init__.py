"""``judgelab serve``: one loaded judge model behind the HTTP protocols clients already speak.

- judgelab's own ``/v1/evaluate`` (Spring AI's evaluators as JSON),
- TypeSafe's ``/v1/systemone`` (typed yes/no questions over a state),
- Ollama's ``/api/chat``, ``/api/generate``, ``/api/tags``, ``/api/show``, ``/api/version``,
- OpenAI's ``/v1/chat/completions``, ``/v1/decisions`` and ``/v1/models``,
- ``/healthz`` and ``/metrics``.

One worker thread owns the model; concurrent requests are micro-batched
through its queue (``Batcher``) and take turns, so a long request never
holds the others. Every limit (body size, prompts per request, header and
keep-alive timeouts, connections) is a ``ServerConfig`` field and a
``judgelab serve`` flag; see docs/server.md. Needs FastAPI and uvicorn
(installed with judgelab).
"""

from judgelab.server._app import create_app
from judgelab.server._batching import Batcher, BatcherClosedError
from judgelab.server._config import API_KEY_ENV, DEFAULT_PORT, ServerConfig
from judgelab.server._errors import APIError
from judgelab.server._queued import QueuedModel, RequestTicket
from judgelab.server._run import ServerThread, serve

__all__ = [
    "API_KEY_ENV",
    "APIError",
    "Batcher",
    "BatcherClosedError",
    "DEFAULT_PORT",
    "QueuedModel",
    "RequestTicket",
    "ServerConfig",
    "ServerThread",
    "create_app",
    "serve",
]
