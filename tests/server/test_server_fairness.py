"""One long request must not block everyone: turns, a per-request limit, cancellation on disconnect.

Against a real ``judgelab serve`` process that gives each request one prompt per engine call
(``--turn-tokens 1``) and at most 24 prompts (``--max-request-prompts 24``).
"""

from __future__ import annotations

import json
import socket
import threading
import time

import httpx
import pytest

CLAIM = "The sky is green."


def _document(n_sentences: int) -> str:
    colours = ["blue", "grey", "red", "pink", "black", "white", "gold"]
    return " ".join(f"Report {i} says the sky over town {i % 13} was {colours[i % 7]} that day."
                    for i in range(n_sentences))


def _n_chunks(judge_model, document: str) -> int:
    """How many prompts the server's fact-checking evaluator makes of it (same spec and n_ctx)."""
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    return len(FactCheckingEvaluator(judge_model).prompts_for(EvaluationRequest(document, [], CLAIM)))


def _evaluate_body(document: str) -> dict:
    return {"evaluator": "fact-checking", "request": {"user_text": document, "response_content": CLAIM}}


def _judgments(url: str) -> int:
    return httpx.get(f"{url}/metrics", timeout=30).json()["judgments"]


def _wait_idle(url: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while httpx.get(f"{url}/healthz", timeout=30).json()["queued"] > 0:
        assert time.monotonic() < deadline, "the worker never went idle"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def long_document(judge_model, limits) -> tuple[str, int]:
    document = _document(220)
    n = _n_chunks(judge_model, document)
    assert 6 <= n <= limits.prompts, n
    return document, n


def test_a_short_request_is_not_held_behind_a_long_document(limited_server, long_document):
    url = limited_server.url
    document, n_chunks = long_document
    _wait_idle(url)
    before = _judgments(url)
    finished: list[str] = []

    def long_request() -> None:
        r = httpx.post(f"{url}/v1/evaluate", json=_evaluate_body(document), timeout=600)
        assert r.status_code == 200, r.text
        assert len(r.json()["metadata"]["chunks"]) == n_chunks
        finished.append("long")

    worker = threading.Thread(target=long_request)
    worker.start()
    # once the long request has had its first turn, it is in flight with chunks still to judge
    while _judgments(url) == before and worker.is_alive():
        time.sleep(0.05)
    chat = {"model": "gemma-3-270m", "stream": False, "messages": [{"role": "user", "content": "Is ice cold?"}]}
    r = httpx.post(f"{url}/api/chat", json=chat, timeout=600)
    assert r.status_code == 200, r.text
    finished.append("short")
    worker.join(600)
    # the short one joined the long one's next turn, instead of waiting for all its chunks
    assert finished == ["short", "long"], finished


def test_a_request_over_the_prompt_limit_is_413_naming_the_flag(limited_server, judge_model, limits):
    document = _document(1200)
    assert _n_chunks(judge_model, document) > limits.prompts
    before = _judgments(limited_server.url)
    r = httpx.post(f"{limited_server.url}/v1/evaluate", json=_evaluate_body(document), timeout=600)
    assert r.status_code == 413, r.text
    message = r.json()["error"]["message"]
    assert f"the limit is {limits.prompts}" in message and "--max-request-prompts" in message
    assert _judgments(limited_server.url) == before  # refused before anything was judged


def test_a_disconnected_client_has_its_queued_prompts_dropped(limited_server, long_document):
    url = limited_server.url
    document, n_chunks = long_document
    _wait_idle(url)
    before = _judgments(url)
    body = json.dumps(_evaluate_body(document)).encode()
    head = (f"POST /v1/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", limited_server.port), timeout=30) as sock:
        sock.sendall(head + body)
        deadline = time.monotonic() + 300
        while _judgments(url) == before:  # its first chunk was judged: the request is in flight
            assert time.monotonic() < deadline, "the request never started"
            time.sleep(0.05)
    # the client is gone; what was still queued must not be judged
    _wait_idle(url)
    judged = _judgments(url) - before
    assert judged < n_chunks // 2, f"{judged} of {n_chunks} chunks were judged after the client left"
    chat = {"model": "gemma-3-270m", "stream": False, "messages": [{"role": "user", "content": "Is ice cold?"}]}
    assert httpx.post(f"{url}/api/chat", json=chat, timeout=600).status_code == 200
