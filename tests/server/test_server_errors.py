"""Each bad input gets a 4xx with a JSON error that says what was wrong; the API key is enforced."""

from __future__ import annotations

import gzip
import json
import socket

import httpx

MODEL = "gemma-3-270m"
CHAT = {"model": MODEL, "stream": False, "messages": [{"role": "user", "content": "Is Paris in France?"}]}


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    return error if isinstance(error, str) else error["message"]


def test_invalid_json(http):
    assert "not valid JSON" in _error(http.post("/api/chat", content=b"{bad"), 400)
    assert "line 1 column 2" in _error(http.post("/v1/chat/completions", content=b"{bad"), 400)
    assert "JSON object" in _error(http.post("/v1/evaluate", json=[1, 2]), 400)
    assert "empty" in _error(http.post("/v1/systemone", content=b""), 400)


def test_missing_fields(http):
    assert "model: Field required" in _error(http.post("/api/chat", json={"messages": []}), 400)
    r = http.post("/v1/chat/completions", json={"model": MODEL})
    assert "messages: Field required" in _error(r, 400)
    assert r.json()["error"]["param"] == "messages"
    assert "request: Field required" in _error(http.post("/v1/evaluate", json={"evaluator": "relevancy"}), 400)
    r = http.post("/v1/systemone", json={"state": "x", "questions": {"q": {"type": "noul"}}})
    assert "needs instructions or criteria" in _error(r, 400)
    assert r.json()["detail"][0]["loc"][:3] == ["body", "questions", "q"]
    assert "only system messages" in _error(
        http.post("/api/chat", json={**CHAT, "messages": [{"role": "system", "content": "Be nice."}]}), 400)


def test_unknown_model_and_evaluator(http):
    assert "'llama3' not found" in _error(http.post("/api/chat", json={**CHAT, "model": "llama3"}), 404)
    assert "not found" in _error(http.post("/api/show", json={"model": "llama3"}), 404)
    r = http.post("/v1/evaluate", json={"evaluator": "toxicity", "request": {"user_text": "x"}})
    message = _error(r, 404)
    assert "'toxicity'" in message and "fact-checking" in message
    assert "No endpoint" in _error(http.get("/v1/nothing"), 404)


def test_prompt_over_the_context_says_how_many_tokens(http, judge_model):
    long_text = "word " * (judge_model.n_ctx + 200)
    r = http.post("/v1/chat/completions", json={"model": MODEL, "messages": [{"role": "user", "content": long_text}]})
    message = _error(r, 400)
    assert r.json()["error"]["code"] == "context_length_exceeded"
    assert f"context holds: {judge_model.n_ctx}" in message
    n = int(message.split("prompt tokens: ")[1].split(",")[0])
    assert n > judge_model.n_ctx
    assert "tokens but the model's context holds" in _error(
        http.post("/api/generate", json={"model": MODEL, "prompt": long_text, "stream": False}), 400)


def test_body_over_the_size_limit(http):
    big = {**CHAT, "messages": [{"role": "user", "content": "x" * (300 * 1024)}]}
    assert "limit" in _error(http.post("/api/chat", json=big), 413)
    # the limit also holds for a small compressed body that inflates past it
    packed = gzip.compress(json.dumps(big).encode())
    r = http.post("/api/chat", content=packed, headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
    assert "once decompressed" in _error(r, 413)
    r = http.post("/api/chat", content=b"{}", headers={"Content-Encoding": "br"})
    assert "Unsupported Content-Encoding" in _error(r, 415)


def test_gzip_body_is_accepted(http):
    r = http.post("/api/chat", content=gzip.compress(json.dumps(CHAT).encode()),
                  headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
    assert r.status_code == 200 and r.json()["message"]["content"] in {"Yes", "No"}


def test_options_that_cannot_be_honoured(http):
    r = http.post("/api/chat", json={**CHAT, "options": {"num_predict": 0}})
    assert "no room for a label" in _error(r, 400)
    r = http.post("/v1/chat/completions", json={**CHAT, "n": 3})
    assert "n:" in _error(r, 400)
    r = http.post("/api/chat", json={**CHAT, "labels": ["Yes"]})
    assert "at least two labels" in _error(r, 400)
    r = http.post("/api/chat", json={**CHAT, "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})
    assert "text parts only" in _error(r, 400)


def test_api_key_is_enforced(base_url, api_key):
    with httpx.Client(base_url=base_url, timeout=60) as anonymous:
        assert anonymous.get("/healthz").status_code == 200
        for method, path in [("GET", "/api/tags"), ("POST", "/api/chat"), ("GET", "/v1/models"),
                             ("POST", "/v1/chat/completions"), ("POST", "/v1/systemone"),
                             ("POST", "/v1/evaluate"), ("GET", "/metrics")]:
            r = anonymous.request(method, path, json=CHAT)
            assert "API key" in _error(r, 401), path
        r = anonymous.get("/api/tags", headers={"Authorization": "Bearer wrong"})
        assert "Invalid API key" in _error(r, 401)
        assert anonymous.get("/api/tags", headers={"Authorization": f"Bearer {api_key}"}).status_code == 200


def test_client_that_disconnects_does_not_break_the_server(judge_server, http):
    body = json.dumps(CHAT).encode()
    head = (f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {http.headers['authorization'].split()[1]}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    for payload in (head + body[:10], head + body):  # mid-body, and after a full request
        with socket.create_connection(("127.0.0.1", judge_server.port), timeout=10) as sock:
            sock.sendall(payload)
    r = http.post("/api/chat", json=CHAT)
    assert r.status_code == 200 and r.json()["message"]["content"] in {"Yes", "No"}
    assert http.get("/healthz").json()["status"] == "ok"


def test_metrics(http):
    http.post("/api/chat", json=CHAT)
    data = http.get("/metrics").json()
    assert data["judgments"] >= 1 and data["prompt_tokens"] > 0 and data["batches"] >= 1
    chat = data["routes"]["/api/chat"]
    assert chat["by_status"]["200"] >= 1 and chat["latency_ms"]["p50"] > 0
    text = http.get("/metrics", params={"format": "prometheus"}).text
    assert 'judgelab_judgments_total{model="gemma-3-270m"}' in text


def test_lone_surrogate_is_400_not_500(http):
    body = '{"model": "gemma-3-270m", "stream": false, "messages": [{"role": "user", "content": "x \\ud800"}]}'
    assert "lone surrogate" in _error(http.post("/api/chat", content=body.encode()), 400)
    r = http.post("/v1/chat/completions", content=body.replace("x \\ud800", "\\udfff y").encode())
    assert "lone surrogate" in _error(r, 400)
    # a proper surrogate pair is an ordinary character
    pair = body.replace("x \\ud800", "\\ud83d\\ude00 Is Paris in France?")
    assert http.post("/api/chat", content=pair.encode()).status_code == 200


def test_deeply_nested_json_is_400_without_a_recursion_error(http, caplog):
    deep = '{"model": "gemma-3-270m", "state": ' + "[" * 10_000 + "]" * 10_000 + ', "questions": {}}'
    with caplog.at_level("ERROR"):
        message = _error(http.post("/v1/systemone", content=deep.encode()), 400)
        assert "nested 10001 levels deep" in message and "at most 64" in message
        # brackets inside strings do not count
        flat = json.dumps({"model": "gemma-3-270m", "state": "[" * 10_000, "questions": {}})
        assert "questions" in _error(http.post("/v1/systemone", content=flat.encode()), 400)
    assert not [r for r in caplog.records if "RecursionError" in r.getMessage() or (
        r.exc_info and isinstance(r.exc_info[1], RecursionError))]
