"""Remote judges against ``judgelab serve`` (a real uvicorn on 127.0.0.1): OpenAI chat, Ollama chat,
/v1/decisions and text mode; the one-line CLI errors; a killed remote calibration resumes asking only
for the rows it had not scored (counted at the server).

The served model is the session's gemma-3-270m, so the remote answers must equal the in-process ones
(the server renders the same prompt with the same model).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from judgelab import questions as q
from judgelab.cli import main as cli_main
from judgelab.engine import RemoteJudgment, load_model
from judgelab.errors import RemoteError
from judgelab.server import ServerConfig, ServerThread, create_app

KEY = "remote-test-key"
REPO = Path(__file__).resolve().parents[1]
STARTER = REPO / "calibration" / "starter.jsonl"
USERS = [
    "Document: The sky is blue.\nClaim: The sky is blue.\nIs the claim supported? Answer Yes or No.",
    "Document: Water boils at 100 degrees Celsius at sea level.\nClaim: Water boils at 50 degrees.\nSupported?",
    "Is Paris the capital of France? Answer Yes or No.",
    "Document: Cats are mammals.\nClaim: Cats lay eggs.\nIs the claim supported?",
]


@pytest.fixture(scope="module")
def served(judge_model):
    """``judgelab serve`` in a thread, with an API key, serving the session's gemma-3-270m."""
    server = ServerThread(create_app(judge_model, ServerConfig(api_key=KEY)), host="127.0.0.1", port=0).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def no_logprobs_server():
    """An OpenAI-compatible server that answers chat completions with text and drops ``logprobs``,
    as some hosted APIs do (no server installable here behaves so; this one is 20 lines of FastAPI)."""
    app = FastAPI()

    @app.get("/v1/models")
    def models():
        return {"object": "list", "data": [{"id": "texty", "object": "model"}]}

    @app.post("/v1/chat/completions")
    def chat(body: dict):
        text = body["messages"][-1]["content"]
        answer = "Yes" if "Paris" in text or "blue" in text else "No, it is not."
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer},
                             "finish_reason": "stop"}], "usage": {"prompt_tokens": 7, "completion_tokens": 1}}

    flaky = {"calls": 0}

    @app.post("/flaky/v1/chat/completions")
    def flaky_chat(body: dict):
        """429 with Retry-After, then 503, then the answer: a busy hosted API."""
        flaky["calls"] += 1
        if flaky["calls"] <= 2:
            return JSONResponse({"error": {"message": "slow down"}}, status_code=429, headers={"Retry-After": "0.1"})
        if flaky["calls"] == 3:
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
        return chat(body)

    port = _closed_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield SimpleNamespace(url=f"http://127.0.0.1:{port}", flaky=flaky)
    server.should_exit = True
    thread.join(timeout=30)


def _equal_to_in_process(judge_model, ref: str) -> list[RemoteJudgment]:
    with load_model(ref, api_key=KEY) as remote:
        got = remote.judge_many([remote.render(u) for u in USERS], ["Yes", "No"])
        usage = remote.usage()
    want = judge_model.judge_many([judge_model.render(u) for u in USERS], ["Yes", "No"])
    for g, w in zip(got, want):
        assert isinstance(g, RemoteJudgment)
        assert g.probabilities["Yes"] == pytest.approx(w.probabilities["Yes"], abs=1e-6)
        assert g.prompt_tokens == w.prompt_tokens  # the server's count, not the estimate
    assert usage["requests"] == len(USERS) + 2 and usage["failures"] == 0  # + the model list and the probe
    return got


def test_openai_chat_protocol_equals_in_process(judge_model, served):
    got = _equal_to_in_process(judge_model, f"openai:{served.url}/v1#gemma-3-270m")
    assert all(j.mode == "logprobs" and j.label_mass == pytest.approx(1.0) for j in got)


def test_ollama_chat_protocol_equals_in_process(judge_model, served):
    _equal_to_in_process(judge_model, f"ollama:{served.url}#gemma-3-270m")


def test_decisions_protocol_gives_the_servers_probabilities(judge_model, served):
    with load_model(f"decisions:{served.url}/v1#gemma-3-270m", api_key=KEY) as remote:
        instructions = remote.spec.remote.instructions
        yes_no = remote.judge(remote.render(USERS[0]), ["Yes", "No"])
        choice = remote.probabilities(remote.render("I was charged twice this month."), ["billing", "technical"])
    want = q.ask(judge_model, {"input": USERS[0]}, q.Noul(instructions=instructions))
    assert yes_no.mode == "decisions"
    assert yes_no.probabilities["Yes"] == pytest.approx(want.probability, abs=1e-6)
    options = {"billing": "", "technical": ""}
    want_choice = q.ask(judge_model, {"input": "I was charged twice this month."},
                        q.Choice(instructions=instructions, options=options))
    assert choice == pytest.approx(want_choice.probabilities, abs=1e-6)


def test_text_mode_scores_one_or_zero_and_says_so(judge_model, served):
    with load_model(f"ollama+text:{served.url}#gemma-3-270m", api_key=KEY) as remote:
        got = remote.judge_many([remote.render(u) for u in USERS], ["Yes", "No"])
    want = judge_model.judge_many([judge_model.render(u) for u in USERS], ["Yes", "No"])
    for g, w in zip(got, want):
        assert g.mode == "text" and g.label_mass is None
        assert g.probabilities == {"Yes": float(w.label == "Yes"), "No": float(w.label == "No")}


def test_text_mode_reads_a_server_that_drops_logprobs(no_logprobs_server):
    with load_model(f"openai+text:{no_logprobs_server.url}/v1#texty") as remote:
        got = remote.judge_many([remote.render(u) for u in USERS], ["Yes", "No"])
    assert [j.label for j in got] == ["Yes", "No", "Yes", "No"]


def test_429_and_503_are_retried_honouring_retry_after(no_logprobs_server):
    with load_model(f"openai+text:{no_logprobs_server.url}/flaky/v1#texty", check=False, backoff=0.05) as remote:
        judgment = remote.judge(remote.render(USERS[2]), ["Yes", "No"])
        usage = remote.usage()
    assert judgment.label == "Yes" and no_logprobs_server.flaky["calls"] == 4
    assert (usage["requests"], usage["retries"], usage["failures"]) == (4, 3, 0)
    with load_model(f"openai+text:{no_logprobs_server.url}/flaky/v1#texty", check=False, max_retries=0) as remote:
        no_logprobs_server.flaky["calls"] = 0
        with pytest.raises(RemoteError) as err:
            remote.judge(remote.render(USERS[2]), ["Yes", "No"])
    assert err.value.reason == "rate_limited" and err.value.status == 429


def _cli_error(capsys, model: str, out: Path) -> str:
    code = cli_main(["calibrate", "--model", model, "--set", str(STARTER), "--limit", "2", "--no-plots",
                     "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    return err


def test_bad_endpoints_are_one_line_and_exit_code_2(served, no_logprobs_server, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    closed = _closed_port()
    assert "Cannot reach" in _cli_error(capsys, f"openai:http://127.0.0.1:{closed}/v1#gemma-3-270m", tmp_path / "a")
    assert "does not have model 'nope'" in _cli_error(capsys, f"openai:{served.url}/v1#nope", tmp_path / "b")
    assert "answered 404" in _cli_error(capsys, f"openai:{served.url}/wrong#gemma-3-270m", tmp_path / "c")
    assert "ignored logprobs" in _cli_error(capsys, f"openai:{no_logprobs_server.url}/v1#texty", tmp_path / "d")
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key")
    assert "refused the API key (HTTP 401" in _cli_error(capsys, f"openai:{served.url}/v1#gemma-3-270m", tmp_path / "e")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert "$OPENAI_API_KEY is not set" in _cli_error(capsys, f"openai:{served.url}/v1#gemma-3-270m", tmp_path / "f")


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_a_row_without_a_label_is_an_error_record_and_the_error_names_it(served):
    with load_model(f"openai:{served.url}/v1#gemma-3-270m", api_key=KEY) as remote:
        with pytest.raises(RemoteError) as err:
            # the server answers with its default labels (Yes/No): none of these is among them
            remote.judge(remote.render(USERS[0]), ["Alpha", "Beta"])
    assert err.value.reason == "no_label" and "Alpha" in str(err.value)


def _chat_requests(served) -> int:
    snap = httpx.get(f"{served.url}/metrics", headers={"Authorization": f"Bearer {KEY}"}).json()
    return snap["routes"].get("/v1/chat/completions", {}).get("requests", 0)


def _scored_ids(path: Path) -> set[str]:
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # the partial line a kill leaves
            continue
        if record.get("score") is not None:
            ids.add(record["id"])
    return ids


def test_a_killed_remote_calibration_asks_only_for_the_missing_rows(served, tmp_path, capsys, monkeypatch):
    model, n = f"openai:{served.url}/v1#gemma-3-270m", 24
    args = ["calibrate", "--model", model, "--set", str(STARTER), "--task", "fact-check", "--limit", str(n),
            "--batch-size", "2", "--resamples", "100", "--no-plots", "--no-progress", "--out", str(tmp_path / "run")]
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.cli", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    scores = tmp_path / "run" / "scores.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if scores.exists() and len(_scored_ids(scores)) >= 6:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    proc.wait()
    done = _scored_ids(scores)
    assert proc.returncode == -signal.SIGKILL and 6 <= len(done) < n, (proc.returncode, len(done))
    before = _chat_requests(served)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert cli_main(args) == 0
    capsys.readouterr()
    asked = _chat_requests(served) - before
    assert asked == (n - len(done)) + 1  # the missing rows, and the load's one probe
    assert len(_scored_ids(scores)) == n
