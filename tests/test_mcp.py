"""``judgelab mcp`` as a real subprocess, driven by the official ``mcp`` SDK's client, over stdio and HTTP.

Each transport gets one server process (one model load) and one client
session that runs every check: the tools and their schemas, fact_check's P
against ``FactCheckingEvaluator`` on the same request, decide with a
predicate, a choice and a score, a bad argument (a one-line tool error, then
a good call), and 8 concurrent calls.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from judgelab.cli import main; sys.exit(main(sys.argv[1:]))"
TOOLS = {"fact_check", "check_relevancy", "decide", "evaluate", "list_models"}
DOC = "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."
CLAIM = "The Eiffel Tower was completed in 1889."
API_KEY = "test-key-7f3a"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    env.pop("JUDGELAB_API_KEY", None)
    return env


def _text(result) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def _sdk():
    """The SDK's ``Client`` and ``StdioServerParameters`` (the test skips without the mcp extra)."""
    pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install 'judgelab[mcp]'")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    return Client, StdioServerParameters


async def _exercise(client, expected_p: float, model_id: str) -> None:
    listed = await client.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.input_schema["type"] == "object" and len(tool.description or "") > 80, tool.name
    assert set(tools["fact_check"].input_schema["required"]) == {"document", "claim"}
    assert {"probability", "verdict", "decision", "chunks"} <= set(tools["fact_check"].output_schema["properties"])

    checked = await client.call_tool("fact_check", {"document": DOC, "claim": CLAIM})
    assert not checked.is_error, _text(checked)
    out = checked.structured_content
    assert abs(out["probability"] - expected_p) <= 1e-6, (out["probability"], expected_p)
    assert out["verdict"] in ("supported", "not supported") and out["threshold"] == 0.5
    assert len(out["chunks"]) == 1 and out["model"] == model_id and out["spec_hash"]

    decided = await client.call_tool("decide", {"input": f"Question: when was the tower finished? Answer: {CLAIM}",
                                                "questions": [
        {"type": "predicate", "name": "correct", "instructions": "Is the answer correct?"},
        {"type": "choice", "name": "tone", "instructions": "What is the tone of the answer?",
         "choices": [{"value": "formal"}, {"value": "casual"}]},
        {"type": "score", "name": "quality", "instructions": "How good is the answer?",
         "levels": [{"label": "bad"}, {"label": "fair"}, {"label": "good"}]},
    ]})
    assert not decided.is_error, _text(decided)
    predicate, choice, score = decided.structured_content["answers"]
    assert predicate["type"] == "predicate" and 0.0 < predicate["probability"] < 1.0
    assert choice["choice"] in ("formal", "casual")
    assert abs(sum(p["probability"] for p in choice["probabilities"]) - 1.0) < 1e-6
    assert score["type"] == "score" and 0.0 <= score["score"] <= 2.0 and len(score["probabilities"]) == 3

    bad = await client.call_tool("fact_check", {"document": DOC})
    assert bad.is_error
    message = _text(bad)
    assert "\n" not in message and "claim" in message and "Field required" in message, message
    unknown = await client.call_tool("evaluate", {"evaluator": "no-such-judge", "user_text": DOC})
    assert unknown.is_error and "Unknown evaluator 'no-such-judge'" in _text(unknown) and "\n" not in _text(unknown)
    again = await client.call_tool("check_relevancy", {"query": "When was the Eiffel Tower finished?",
                                                       "context": [DOC], "answer": CLAIM})
    assert not again.is_error and again.structured_content["verdict"] in ("relevant", "not relevant")

    claims = [f"The tower was completed in {1885 + i}." for i in range(8)]
    results = await asyncio.gather(*(client.call_tool("fact_check", {"document": DOC, "claim": c}) for c in claims))
    assert [r.is_error for r in results] == [False] * 8, [_text(r) for r in results if r.is_error]
    assert all(0.0 < r.structured_content["probability"] < 1.0 for r in results)

    models = (await client.call_tool("list_models", {})).structured_content
    assert models["served"] == model_id
    assert {"fact-checking", "relevancy"} <= {e["name"] for e in models["evaluators"]}


@pytest.fixture(scope="module")
def expected_p(judge_model) -> float:
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    return FactCheckingEvaluator(judge_model).evaluate(EvaluationRequest(user_text=DOC, response_content=CLAIM)).score


def test_stdio(expected_p, judge_model):
    Client, StdioServerParameters = _sdk()
    params = StdioServerParameters(command=sys.executable, env=_env(),
                                   args=["-c", CLI, "mcp", "--model", judge_model.id, "--threads", "1"])

    async def session() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            await _exercise(client, expected_p, judge_model.id)

    asyncio.run(session())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_server(judge_model):
    _sdk()
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", CLI, "mcp", "--model", judge_model.id, "--threads", "1",
                             "--http", f"127.0.0.1:{port}", "--max-body-bytes", "4096",
                             "--api-key", API_KEY], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    deadline = time.monotonic() + 300
    while True:
        if proc.poll() is not None:
            pytest.fail(f"judgelab mcp --http exited {proc.returncode}: {proc.stdout.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail("judgelab mcp --http did not listen within 300 s")
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_streamable_http(http_server, expected_p, judge_model):
    Client, _ = _sdk()
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def session() -> None:
        headers = {"Authorization": f"Bearer {API_KEY}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
            async with Client(streamable_http_client(http_server, http_client=http)) as client:
                await _exercise(client, expected_p, judge_model.id)

    asyncio.run(session())


def test_http_needs_the_api_key(http_server):
    import httpx

    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = httpx.post(http_server, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                              headers={"Accept": "application/json, text/event-stream", **headers}, timeout=30)
        assert response.status_code == 401, response.text
        assert "judgelab mcp --api-key" in response.json()["error"]


def test_without_the_extra_the_command_says_what_to_install():
    blocked = "import sys; sys.modules['mcp'] = None; from judgelab.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", blocked, "mcp"], env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "judgelab mcp: error: judgelab mcp needs the MCP Python SDK" in proc.stderr
    assert "pip install 'judgelab[mcp]'" in proc.stderr and "Traceback" not in proc.stderr


def test_http_refuses_a_body_over_max_body_bytes(http_server):
    import httpx

    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "fact_check", "arguments": {"document": "x" * 5000, "claim": "y"}}}
    response = httpx.post(http_server, json=big, timeout=30, headers={
        "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {API_KEY}"})
    assert response.status_code == 413, response.text


def _in_process(judge, calls):
    """Run ``calls(client)`` against ``create_mcp_server(judge)`` with the SDK's in-process client."""
    Client, _ = _sdk()
    from judgelab.mcp import create_mcp_server

    async def session():
        async with Client(create_mcp_server(judge)) as client:
            return await calls(client)

    try:
        return asyncio.run(session())
    finally:
        judge.close()


def test_a_policy_decides_and_limits_are_tool_errors(judge_model):
    from judgelab.calibration import Policy
    from judgelab.evaluators import FactCheckingEvaluator
    from judgelab.mcp import McpJudge
    from judgelab.server import ServerConfig

    policy = Policy(task="fact-check", lower=0.001, upper=0.999, alpha=0.1, delta=0.1, feasible=True, n=200,
                    n_units=200, unit_size=1, spec_hash=judge_model.spec.spec_hash,
                    template_hash=FactCheckingEvaluator(judge_model).template_hash, model=judge_model.id)
    judge = McpJudge(judge_model, ServerConfig(policy=policy, max_request_prompts=2))

    async def calls(client):
        decided = await client.call_tool("fact_check", {"document": DOC, "claim": CLAIM})
        too_many = await client.call_tool("decide", {"input": DOC, "questions": [
            {"type": "predicate", "instructions": f"Is statement {i} true?"} for i in range(3)]})
        imported = await client.call_tool("evaluate", {"evaluator": "os:getcwd", "user_text": DOC})
        return decided, too_many, imported

    decided, too_many, imported = _in_process(judge, calls)
    out = decided.structured_content
    assert (out["decision"], out["verdict"], out["threshold"], out["passed"]) == ("abstain", "abstain", None, False)
    assert out["policy"]["lower"] == 0.001 and out["policy"]["upper"] == 0.999
    assert too_many.is_error and "the limit is 2 per request" in _text(too_many) and "\n" not in _text(too_many)
    assert imported.is_error and "'module:callable' evaluators are not served over MCP" in _text(imported)


def test_decide_refuses_what_the_decisions_server_refuses(judge_model):
    """One question model (judgelab.wire.DecisionQuestion) for both: the server's 400s are MCP's tool errors."""
    from judgelab.mcp import McpJudge
    from judgelab.server import ServerConfig

    judge = McpJudge(judge_model, ServerConfig())
    refused = {
        "empty instructions": {"type": "predicate", "instructions": " "},
        "a choice value that is a number": {"type": "choice", "instructions": "Pick.",
                                            "choices": [{"value": 1}, {"value": 0}]},
        "27 choices": {"type": "choice", "instructions": "Pick.", "choices": [{"value": f"c{i}"} for i in range(27)]},
        "one level": {"type": "score", "instructions": "Rate.", "levels": [{"label": "only"}]},
    }

    async def calls(client):
        out = {name: await client.call_tool("decide", {"input": DOC, "questions": [question]})
               for name, question in refused.items()}
        out["text parts"] = await client.call_tool("decide", {"input": DOC, "questions": [
            {"type": "predicate", "instructions": [{"type": "input_text", "text": "Is the document about a tower?"}]}]})
        return out

    results = _in_process(judge, calls)
    for name in refused:
        assert results[name].is_error, name
    assert "is empty" in _text(results["empty instructions"]) and "at most 26" in _text(results["27 choices"])
    assert "2 to 10" in _text(results["one level"])
    parts = results["text parts"]  # instructions as text parts, as the API (and the server) allow
    assert not parts.is_error, _text(parts)
    assert parts.structured_content["answers"][0]["type"] == "predicate"


def test_a_policy_for_another_judge_is_refused(judge_model):
    from judgelab.calibration import Policy
    from judgelab.errors import PolicyMismatchError
    from judgelab.mcp import McpJudge
    from judgelab.server import ServerConfig

    fields = dict(task="fact-check", lower=0.2, upper=0.8, alpha=0.1, delta=0.1, feasible=True, n=200,
                  n_units=200, unit_size=1, template_hash="1" * 16)
    policy = Policy(**fields, spec_hash="0" * 16)
    with pytest.raises(PolicyMismatchError, match="calibrated for another judge"):
        McpJudge(judge_model, ServerConfig(policy=policy))
    ours = Policy(**fields, spec_hash=judge_model.spec.spec_hash)  # a policy is one stage: its hashes are the stage's
    with pytest.raises(PolicyMismatchError, match="calibrated for no evaluator this server runs"):
        McpJudge(judge_model, ServerConfig(policy=ours))
