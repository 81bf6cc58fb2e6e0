"""A served judge (``judgelab serve`` in a thread on 127.0.0.1, the session's gemma-3-270m) that stops mid-run,
long documents read remotely as in process, and the Ollama API's model facts (issue 40).

- a calibration whose server stops after a few rows ends with exit 3 and one line, writes no headline,
  threshold, calibrator or policy, and stops scoring instead of failing every remaining row;
- with ``--allow-partial`` the same run publishes, its headline "on N of M rows";
- a remote judge in short form cuts long documents with the server's tokenizer (``POST /tokenize``) into the
  in-process chunks, so the scores agree within the engine's cross-batch test bound (1e-4, docs/engine.md);
- ``/api/ps`` and ``/api/tags`` give the weights file's size and its full sha256, read by the ollama client.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from judgelab.cli import main as cli_main
from judgelab.engine import load_model
from judgelab.evaluators import build_evaluator
from judgelab.server import ServerConfig, ServerThread, create_app

KEY = "partial-test-key"
REPO = Path(__file__).resolve().parents[1]
STARTER = REPO / "calibration" / "starter.jsonl"
ROWS = 8
PUBLISHED = ("metrics.json", "report.md", "report.html", "policy.json", "calibrator-fact-check.json")


def _scored(path: Path) -> int:
    if not path.exists():
        return 0
    n = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            n += json.loads(line).get("score") is not None
        except ValueError:
            continue
    return n


def _remote_spec(folder: Path, url: str) -> Path:
    """The served gemma-3-270m as a spec file: the short form's reading, with a timeout a slow CPU needs."""
    path = folder / "served.toml"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(f"""id = "gemma-3-270m"
family = "gemma"
context_length = 2048
chunk_tokens = 700

[prompt]
style = "chat"

[remote]
url = "{url}/v1"
protocol = "openai-chat"
model = "gemma-3-270m"
api_key_env = "OPENAI_API_KEY"
timeout = 900
""", encoding="utf-8")
    return path


def _calibrate_while_the_server_dies(judge_model, out: Path, *extra: str, after: int = 2) -> tuple[int, int]:
    """Run ``judgelab calibrate`` against a served judge that is stopped once ``after`` rows are scored."""
    server = ServerThread(create_app(judge_model, ServerConfig(api_key=KEY)), host="127.0.0.1", port=0).start()
    scores = out / "scores.jsonl"
    spec = _remote_spec(out.parent / f"{out.name}-spec", server.url)

    def stop_when_scored() -> None:
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline and _scored(scores) < after:
            time.sleep(0.05)
        server.stop()

    watcher = threading.Thread(target=stop_when_scored, daemon=True)
    watcher.start()
    args = ["calibrate", "--model", str(spec), "--set", str(STARTER), "--task", "fact-check", "--limit", str(ROWS),
            "--batch-size", "1", "--resamples", "100", "--no-plots", "--no-progress", "--out", str(out), *extra]
    try:
        code = cli_main(args)
    finally:
        watcher.join(timeout=1800)
    return code, _scored(scores)


def test_a_judge_server_that_dies_mid_run_gives_exit_3_one_line_and_no_figures(judge_model, tmp_path, capsys,
                                                                                monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "run"
    code, scored = _calibrate_while_the_server_dies(judge_model, out)
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 3, (code, err)
    assert len(err.splitlines()) == 1, err
    assert err.startswith("judgelab calibrate: partial run: ") and f"of {ROWS} rows failed" in err, err
    assert "Cannot reach the judge server" in err and "same calibrate command again to resume" in err, err
    assert "Ship threshold" not in captured.out
    assert not [name for name in PUBLISHED if (out / name).exists()]
    # scoring stopped soon after the server did, instead of failing every row left
    records = [json.loads(line) for line in (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()]
    assert 2 <= scored < ROWS and len(records) < ROWS, (scored, len(records))


def test_allow_partial_publishes_on_n_of_m_rows(judge_model, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = tmp_path / "run"
    code, scored = _calibrate_while_the_server_dies(judge_model, out, "--allow-partial")
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert f"fact-check: Partial run, on {scored} of {ROWS} rows: " in printed, printed
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["tasks"]["fact-check"]["headline"].startswith(f"Partial run, on {scored} of {ROWS} rows")
    assert doc["tasks"]["fact-check"]["rows"] == {"total": ROWS, "scored": scored, "errors": ROWS - scored}


@pytest.fixture(scope="module")
def served(judge_model):
    app = create_app(judge_model, ServerConfig(api_key=KEY))
    server = ServerThread(app, host="127.0.0.1", port=0).start()
    yield SimpleNamespace(url=server.url, model=judge_model)
    server.stop()


def _long_rows(shared_data: Path, n: int, min_words: int = 600) -> list:
    """``n`` SummEdits news rows whose document is longer than gemma-3-270m's 700-token chunks."""
    from judgelab.calibration import resolve_set

    rows, _, _ = resolve_set(f"summedits:{shared_data / 'summedits' / 'summedits_news.json'}")
    long = [r for r in rows if len(r.documents[0].split()) >= min_words]
    picked, seen = [], set()
    for r in long:  # one claim per document
        if r.documents[0] not in seen:
            seen.add(r.documents[0])
            picked.append(r)
        if len(picked) == n:
            break
    assert len(picked) == n, f"only {len(picked)} long news rows"
    return picked


def test_remote_cuts_long_documents_into_the_in_process_chunks(judge_model, served, shared_data):
    """The short form names a known spec (its chunk_tokens) and counts with the server's /tokenize: same chunks."""
    rows = _long_rows(shared_data, 3)
    local = build_evaluator(None, judge_model, task="fact-check")
    with load_model(f"openai:{served.url}/v1#gemma-3-270m", api_key=KEY, timeout=900) as remote:
        assert remote.spec.chunk_tokens == judge_model.spec.chunk_tokens == 700
        remote_ev = build_evaluator(None, remote, task="fact-check")
        for row in rows:
            here, there = local.prompts_for(row.to_request()), remote_ev.prompts_for(row.to_request())
            assert len(here) == len(there) > 1, (len(here), len(there))
            for mine, theirs in zip(here, there):  # the chunk the server is sent is the one rendered here
                assert theirs.messages[-1][1] in str(mine)
        assert remote.backend.served_tokenizer.available is True


def test_remote_and_in_process_scores_agree_on_a_long_document(judge_model, served, shared_data):
    """Scored both ways, every chunk's P(yes) agrees within the engine's cross-batch test bound (1e-4)."""
    row = min(_long_rows(shared_data, 3), key=lambda r: len(r.documents[0]))
    local = build_evaluator(None, judge_model, task="fact-check")
    with load_model(f"openai:{served.url}/v1#gemma-3-270m", api_key=KEY, timeout=900) as remote:
        here = local.evaluate(row.to_request())
        there = build_evaluator(None, remote, task="fact-check").evaluate(row.to_request())
    chunks_here, chunks_there = here.metadata["chunks"], there.metadata["chunks"]
    assert len(chunks_here) == len(chunks_there) > 1
    assert max(abs(a - b) for a, b in zip(chunks_here, chunks_there)) <= 1e-4
    assert abs(here.score - there.score) <= 1e-4


def test_tokenize_answers_the_served_models_tokens(served):
    import httpx

    text = "Water boils at 100 degrees Celsius at sea level."
    got = httpx.post(f"{served.url}/tokenize", json={"content": text},
                     headers={"Authorization": f"Bearer {KEY}"}, timeout=60).json()
    assert len(got["tokens"]) == served.model.count_tokens(text)


def test_ollama_ps_and_tags_give_the_weights_size_and_full_digest(served):
    import ollama

    client = ollama.Client(host=served.url, headers={"Authorization": f"Bearer {KEY}"})
    weights = Path(served.model.backend.config.model_path)
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    for listing in (client.ps(), client.list()):
        model = listing.models[0]
        assert model.digest == digest and len(model.digest) == 64
        assert model.size == weights.stat().st_size
