"""A real uvicorn server on 127.0.0.1 serving the session's real gemma-3-270m."""

from __future__ import annotations

from types import SimpleNamespace

import httpx
import pytest

API_KEY = "test-key-123"
ALIASES = ("bespoke-minicheck", "jev-latest")
MAX_BODY = 256 * 1024


@pytest.fixture(scope="session")
def judge_server(judge_model):
    """The server (a ``ServerThread``), sharing the ``judge_model`` fixture's model."""
    from judgelab.server import ServerConfig, ServerThread, create_app

    app = create_app(
        judge_model,
        ServerConfig(api_key=API_KEY, aliases=ALIASES, max_body_bytes=MAX_BODY, batch_window_ms=5.0),
    )
    server = ServerThread(app, host="127.0.0.1", port=0).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def base_url(judge_server) -> str:
    return judge_server.url


@pytest.fixture(scope="session")
def api_key() -> str:
    return API_KEY


@pytest.fixture()
def openai_client(base_url, api_key):
    """The official ``openai`` client on the test server."""
    import openai

    return openai.OpenAI(base_url=f"{base_url}/v1", api_key=api_key, max_retries=0)


@pytest.fixture()
def http(base_url):
    """An httpx client carrying the API key."""
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=120) as client:
        yield client


LIMITED_BODY = 1024 * 1024
LIMITED_PROMPTS = 24
LIMITED_HEADER_S = 2
LIMITED_CONNECTIONS = 16


@pytest.fixture(scope="session")
def limits() -> SimpleNamespace:
    """The limits ``limited_server`` runs with: body bytes, prompts a request, header seconds, connections."""
    return SimpleNamespace(body=LIMITED_BODY, prompts=LIMITED_PROMPTS, header_s=LIMITED_HEADER_S,
                           connections=LIMITED_CONNECTIONS)


@pytest.fixture(scope="session")
def limited_server():
    """A ``judgelab serve`` subprocess with tight limits.

    1 MiB bodies, 24 prompts a request, one prompt per request per turn, 2 s for headers, 16 connections.
    """
    import _cli_server

    server = _cli_server.start(
        "--threads", "1", "--labels", "Yes,No", "--max-body-bytes", str(LIMITED_BODY),
        "--turn-tokens", "1", "--max-request-prompts", str(LIMITED_PROMPTS),
        "--header-timeout", str(LIMITED_HEADER_S), "--max-connections", str(LIMITED_CONNECTIONS),
    )
    yield server
    server.stop()


GRADES = ("GRADE: C", "GRADE: I")


@pytest.fixture(scope="session")
def grade_server():
    """``judgelab serve --labels "GRADE: C,GRADE: I"`` as a subprocess: labels that share their first tokens."""
    import _cli_server

    server = _cli_server.start("--threads", "1", "--labels", ",".join(GRADES))
    yield server
    server.stop()
