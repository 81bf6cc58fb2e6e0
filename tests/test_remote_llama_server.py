"""Remote judges against a server judgelab did not write: llama-cpp-python's own OpenAI-compatible server.

The fixture starts ``python -m llama_cpp.server`` on 127.0.0.1 with the embedded GGUFs. One setting
is changed from its defaults, in the launcher below and nowhere else: the model's ``use_extra_bufts``
is off. With it on (llama.cpp's default), llama.cpp repacks the weights into the AMX buffer type on
CPUs with AMX, and llama-cpp-python 0.3.36 then dies with a segmentation fault on the embedded
GGUF (seen on this Intel Xeon with amx_int8: `load_tensors: AMX model buffer size`, then SIGSEGV
during the first completion; with use_extra_bufts off it serves). judgelab's own engine has
always loaded with use_extra_bufts off (``repack_weights=False``), which is why it ran on the same
machine. See docs/remote.md.

Agreement bounds are the suite's cross-backend ones (tests/test_transformers_backend.py); here both
sides are llama.cpp on the same weights, so the numbers differ only by batch shapes.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from judgelab.cli import main as cli_main
from judgelab.engine import load_model
from judgelab.specs import load_spec
from judgelab.weights import resolve_weights, weights_status

pytest.importorskip("llama_cpp.server.app", reason="needs llama-cpp-python's server deps: pip install "
                    "sse-starlette pydantic-settings starlette-context (the test extra)")

REPO = Path(__file__).resolve().parents[1]
STARTER = REPO / "calibration" / "starter.jsonl"

# the suite's cross-backend bounds (tests/test_transformers_backend.py explains them)
MAX_MEAN_DP_YES = 0.03
MAX_Q90_DP_YES = 0.06
CLEAR_MARGIN = 0.1
MAX_DLOGIT = 0.75

LAUNCHER = """
import runpy, sys
import llama_cpp.llama_cpp as lib
_defaults = lib.llama_model_default_params
def _params():
    params = _defaults()
    params.use_extra_bufts = False  # no AMX / repacked weight buffers: see the test module's docstring
    return params
lib.llama_model_default_params = _params
sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__")
"""

PAIRS = [
    ("The Eiffel Tower was completed in 1889. It is 330 metres tall.", "The tower was completed in 1889."),
    ("The Eiffel Tower was completed in 1889. It is 330 metres tall.", "The tower is 500 metres tall."),
    ("Water boils at 100 degrees Celsius at sea level.", "Water boils at 50 degrees at sea level."),
    ("Mount Everest is the highest mountain on Earth.", "Everest is in South America."),
    ("The cat sat on the mat all afternoon.", "A cat was on the mat."),
    ("The meeting was moved from Monday to Wednesday.", "The meeting is on Wednesday."),
    ("Paris is the capital of France.", "Paris is the capital of Germany."),
    ("The recipe needs three eggs and 250 grams of flour.", "The recipe needs three eggs."),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` serving one GGUF under ``alias`` on 127.0.0.1."""

    def __init__(self, gguf: Path, alias: str, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.alias = alias
        self.log = log
        args = ["--model", str(gguf), "--model_alias", alias, "--host", "127.0.0.1", "--port", str(self.port),
                "--n_threads", "1", "--n_ctx", "2048", "--logits_all", "True"]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, *args], stdout=log.open("wb"),
                                     stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not start in 180 s: {log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory):
    server = LlamaServer(resolve_weights(load_spec("gemma-3-270m")), "gemma-served",
                         tmp_path_factory.mktemp("llama-server") / "gemma.log")
    yield server
    server.stop()


def _toml(value) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string here


def remote_copy(spec_id: str, folder: Path, *, url: str, protocol: str, model: str, top_logprobs: int = 1000) -> Path:
    """A spec file for ``spec_id``'s judge served at ``url``: its prompt format, a [remote] table, no weights.

    ``top_logprobs`` is large by default: a label's rarer case and space forms can fall outside a
    small top-k, and the label then loses their mass. With the top 100 that shifted P(yes) by about +0.0005 on every
    row, which a paired comparison of 40 rows detects; with the top 1000 the mean |dP(yes)| was 2.5e-06.
    """
    spec = load_spec(spec_id)
    lines = [f"id = {_toml(spec_id + '-remote')}", f"family = {_toml(spec.family)}", 'backends = ["remote"]',
             f"context_length = {spec.context_length}", f"self_generators = {_toml(spec.self_generators)}", "",
             "[prompt]", f"style = {_toml(spec.prompt.style)}"]
    for key in ("system", "raw_template", "chat_template"):
        if getattr(spec.prompt, key) is not None:
            lines.append(f"{key} = {_toml(getattr(spec.prompt, key))}")
    lines += ["", "[remote]", f"url = {_toml(url)}", f"protocol = {_toml(protocol)}", f"model = {_toml(model)}",
              f"top_logprobs = {top_logprobs}", "concurrency = 2"]
    path = folder / f"{spec_id}-remote.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def _agreement(local, remote, prompts_local, prompts_remote) -> dict:
    a = local.judge_many(prompts_local, ["Yes", "No"])
    b = remote.judge_many(prompts_remote, ["Yes", "No"])
    diffs, dlogits = [], []
    for ja, jb in zip(a, b):
        pa, pb = ja.probabilities["Yes"], jb.probabilities["Yes"]
        if abs(pa - 0.5) >= CLEAR_MARGIN:
            assert ja.label == jb.label, (ja, jb)
        diffs.append(abs(pa - pb))
        dlogits.append(abs(_logit(pa) - _logit(pb)))
        assert jb.missing == () and 0 < jb.label_mass <= 1
    return {"prompts": len(diffs), "mean_abs_dp_yes": float(np.mean(diffs)),
            "q90_abs_dp_yes": float(np.quantile(diffs, 0.9)), "max_abs_dlogit": float(np.max(dlogits))}


def _check_bounds(record: dict) -> None:
    assert record["mean_abs_dp_yes"] <= MAX_MEAN_DP_YES, record
    assert record["q90_abs_dp_yes"] <= MAX_Q90_DP_YES, record
    assert record["max_abs_dlogit"] <= MAX_DLOGIT, record


def _fact_prompts(model) -> list:
    return [model.render(f"Document: {doc}\nClaim: {claim}\nIs the claim supported by the document? "
                         "Answer Yes or No.") for doc, claim in PAIRS]


def test_completions_agree_with_the_same_judge_in_process(judge_model, gemma_server, tmp_path):
    spec_file = remote_copy("gemma-3-270m", tmp_path, url=gemma_server.url, protocol="openai-completions",
                            model=gemma_server.alias)
    with load_model(spec_file) as remote:
        local_prompts, remote_prompts = _fact_prompts(judge_model), _fact_prompts(remote)
        assert [str(p) for p in local_prompts] == [str(p) for p in remote_prompts]
        record = _agreement(judge_model, remote, local_prompts, remote_prompts)
        usage = remote.usage()
    print(f"\nllama_cpp.server completions vs in process: {json.dumps(record)}")
    _check_bounds(record)
    # the server's own token counts come back: the same tokens as in process
    local_tokens = sum(len(judge_model.tokenize(p)) for p in local_prompts)
    assert usage["prompt_tokens"] >= local_tokens and usage["requests"] >= len(PAIRS) + 1


def test_chat_agrees_with_the_same_judge_in_process(smollm_model, tmp_path_factory, tmp_path):
    """smollm2-135m: the server renders its GGUF's chat template; in process renders the spec's (the same)."""
    spec = load_spec("smollm2-135m")
    server = LlamaServer(weights_status(spec).path, "smol-served", tmp_path_factory.mktemp("llama-server") / "s.log")
    try:
        spec_file = remote_copy("smollm2-135m", tmp_path, url=server.url, protocol="openai-chat",
                                model=server.alias, top_logprobs=50)
        with load_model(spec_file) as remote:
            record = _agreement(smollm_model, remote, _fact_prompts(smollm_model), _fact_prompts(remote))
    finally:
        server.stop()
    print(f"\nllama_cpp.server chat vs in process: {json.dumps(record)}")
    _check_bounds(record)


def _calibrate(model: str, out: Path) -> None:
    assert cli_main(["calibrate", "--model", model, "--set", str(STARTER), "--task", "fact-check", "--limit", "40",
                     "--threads", "1", "--resamples", "200", "--no-plots", "--no-progress", "--out", str(out)]) == 0


def test_calibrate_remote_writes_the_in_process_report_and_compare_finds_no_difference(
        gemma_server, tmp_path, capsys):
    spec_file = remote_copy("gemma-3-270m", tmp_path, url=gemma_server.url, protocol="openai-completions",
                            model=gemma_server.alias)
    _calibrate("gemma-3-270m", tmp_path / "local")
    _calibrate(str(spec_file), tmp_path / "remote")
    capsys.readouterr()
    local = [json.loads(line) for line in (tmp_path / "local" / "scores.jsonl").read_text().splitlines()]
    remote = [json.loads(line) for line in (tmp_path / "remote" / "scores.jsonl").read_text().splitlines()]
    assert [r["id"] for r in local] == [r["id"] for r in remote] and len(local) == 40
    assert all(r.get("error") is None for r in remote)
    assert [r["prompt_tokens"] for r in remote] == [r["prompt_tokens"] for r in local]
    diffs = [abs(a["raw_score"] - b["raw_score"]) for a, b in zip(local, remote)]
    assert float(np.mean(diffs)) <= MAX_MEAN_DP_YES and float(np.quantile(diffs, 0.9)) <= MAX_Q90_DP_YES, diffs
    assert cli_main(["compare", str(tmp_path / "local"), str(tmp_path / "remote"), "--json", "--resamples", "500"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    assert comparison["n"] == 40
    # No difference: the same verdict on every row, and every metric's paired difference either
    # has a 95% interval around 0 or is below 1e-3. (A difference of 1e-5 in Brier score can have an
    # interval off 0: the labels' rare forms beyond the top 1000 are a deterministic, one-signed, tiny
    # shift that the paired bootstrap resolves; no decision could depend on it.)
    print(f"\ncompare in process (A) vs llama_cpp.server (B): {json.dumps(comparison['difference_b_minus_a'])}")
    # The same verdict on every row but one whose score sits closer to a threshold than the two
    # paths' scores differ (each run tunes its own threshold on its dev rows, from scores that differ
    # by up to MAX_Q90_DP_YES): a flip there is the measured difference, not a new one.
    ta = json.loads((tmp_path / "local" / "metrics.json").read_text())["tasks"]["fact-check"]["threshold"]["value"]
    tb = json.loads((tmp_path / "remote" / "metrics.json").read_text())["tasks"]["fact-check"]["threshold"]["value"]
    flipped = [(a["id"], a["score"], b["score"]) for a, b in zip(local, remote)
               if (a["score"] >= ta) != (b["score"] >= tb)]
    margin = max(abs(a["score"] - b["score"]) for a, b in zip(local, remote)) + abs(ta - tb) + 1e-9
    assert all(min(abs(sa - ta), abs(sb - tb)) <= margin for _, sa, sb in flipped), (flipped, ta, tb, margin)
    assert comparison["mcnemar"]["only_a_correct"] + comparison["mcnemar"]["only_b_correct"] == len(flipped) <= 1
    for metric, diff in comparison["difference_b_minus_a"].items():
        low, high, estimate = diff.get("low"), diff.get("high"), diff.get("estimate")
        if estimate is not None:
            assert abs(estimate) <= 1e-3 or low <= 0 <= high, (metric, diff)
    metrics_local = json.loads((tmp_path / "local" / "metrics.json").read_text())
    metrics_remote = json.loads((tmp_path / "remote" / "metrics.json").read_text())
    assert metrics_local.keys() == metrics_remote.keys()
