"""A short request's probability does not depend on a long request in flight (real model, real server).

The server judges a long document's chunk prompts in pieces of at most ``--turn-tokens`` tokens and
runs a short request between two pieces; the interrupted prompt is parked meanwhile. The short
request must get exactly the number it gets on an idle server. Exact equality is legitimate here:
every prompt is decoded in pieces that depend on its own tokens only, and each of its tokens sits in
the KV cell of its own position, so nothing the kernels do differently for another batch shape or
another cell can reach it (docs/engine.md, "Same numbers"). Before that, on an AVX-512 CPU, the
short request scored P(Yes) 0.8628 with a long prompt parked and 0.8739 alone.
"""

from __future__ import annotations

import threading
import time

import httpx

CLAIM = "The sky is green."
SHORT = {"evaluator": "fact-checking",
         "request": {"user_text": "The Eiffel Tower was completed in 1889.",
                     "response_content": "It was finished in 1889."}}


def _document(n_sentences: int) -> str:
    colours = ["blue", "grey", "red", "pink", "black", "white", "gold"]
    return " ".join(f"Report {i} says the sky over town {i % 13} was {colours[i % 7]} that day."
                    for i in range(n_sentences))


def _score(http) -> float:
    r = http.post("/v1/evaluate", json=SHORT)
    assert r.status_code == 200, r.text
    return r.json()["score"]


def test_a_short_request_scores_the_same_with_a_long_request_in_flight(http, base_url, api_key):
    deadline = time.monotonic() + 300
    while http.get("/healthz").json()["queued"] > 0:
        assert time.monotonic() < deadline, "the worker never went idle"
        time.sleep(0.1)
    alone = _score(http)
    finished = threading.Event()
    result: dict[str, httpx.Response] = {}

    def long_request() -> None:
        body = {"evaluator": "fact-checking", "request": {"user_text": _document(150), "response_content": CLAIM}}
        result["long"] = httpx.post(f"{base_url}/v1/evaluate", json=body, timeout=900,
                                    headers={"Authorization": f"Bearer {api_key}"})
        finished.set()

    worker = threading.Thread(target=long_request)
    worker.start()
    while http.get("/healthz").json()["queued"] == 0 and not finished.is_set():
        time.sleep(0.02)
    during, in_flight = [], []
    for _ in range(3):
        during.append(_score(http))
        in_flight.append(not finished.is_set())
    worker.join(900)
    assert result["long"].status_code == 200, result["long"].text
    assert len(result["long"].json()["metadata"]["chunks"]) > 1
    assert in_flight[0], "the long request finished before the short one was answered: nothing was tested"
    assert during == [alone] * 3  # exactly, not approximately
