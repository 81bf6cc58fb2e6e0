"""``judgelab tune`` on a 24-row toy set: the loss falls, a killed run resumes to the same adapter,
the tuned spec loads on both backends and they agree, bad input gives one-line errors.

Every tune here runs a few optimizer steps of LoRA on gemma-3-270m (float32, CPU, one torch
thread): about a minute each on two shared cores.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")
pytest.importorskip("peft", reason="needs the tune extra: pip install 'judgelab[tune]'")

from judgelab.calibration import import_snli  # noqa: E402
from judgelab.engine import load_model  # noqa: E402
from judgelab.errors import SpecError  # noqa: E402
from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator  # noqa: E402
from judgelab.specs import load_spec  # noqa: E402
from judgelab.tuning import PROVENANCE_FILE, SPEC_FILE, TuneConfig, sha256_file, tune  # noqa: E402

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"

# The cross-backend bounds of test_transformers_backend.py (derived there from llama.cpp's
# 8-bit activation rounding): mean |dP(yes)|, 90th percentile, and the largest logit shift.
MAX_MEAN_DP_YES = 0.03
MAX_Q90_DP_YES = 0.06
MAX_DLOGIT = 0.75

FACTS = [
    "The museum opens at nine.", "Water boils at 100 C.", "Paris is in France.", "The cat sat on the mat.",
    "Alice bought three apples.", "The meeting is on Thursday.", "Everest is in Asia.", "The train left at noon.",
    "Bob plays the violin.", "The lake froze in January.", "Tom has two dogs.", "The shop sells bread.",
]
UNRELATED = "Bananas are purple and live on the moon."


def _write_toy(path: Path) -> Path:
    """24 separable rows: the claim repeats the document (1) or is nonsense (0)."""
    rows = []
    for i, doc in enumerate(FACTS):
        rows.append({"id": f"t{i}-yes", "task": "fact-check", "documents": [doc], "response": doc, "label": 1})
        rows.append({"id": f"t{i}-no", "task": "fact-check", "documents": [doc], "response": UNRELATED, "label": 0})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy_set(tmp_path_factory) -> Path:
    return _write_toy(tmp_path_factory.mktemp("toy") / "toy.jsonl")


def _tune_args(toy: Path, out: Path, *extra: str) -> list[str]:
    return ["tune", "--set", str(toy), "--out", str(out), "--heldout", "0", "--batch", "4", "--max-steps", "4",
            "--lr", "1e-3", "--threads", "1", "--checkpoint-every", "1", "--no-progress", *extra]


def _cli(args: list[str], **popen) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)}
    code = "import sys; from judgelab.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def _run_cli(args: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    proc = _cli(args)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


@pytest.fixture(scope="module")
def tuned(toy_set, tmp_path_factory) -> Path:
    """An uninterrupted 4-step tune through the CLI; its output folder."""
    out = tmp_path_factory.mktemp("tuned") / "run"
    proc = _run_cli(_tune_args(toy_set, out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_snli_importer(shared_data):
    rows = import_snli(shared_data / "snli" / "esnli_dev.jsonl")
    assert len(rows) == 9842
    labels = {r.meta["snli_label"]: r.label for r in rows}
    assert labels == {"entailment": 1, "neutral": 0, "contradiction": 0}
    first = rows[:3]  # one premise, three hypotheses: one fold group
    assert len({r.unit for r in first}) == 1 and first[0].documents == first[1].documents


def test_loss_falls_on_a_separable_toy_set(toy_set, tmp_path):
    result = tune(TuneConfig(sets=(str(toy_set),), out=str(tmp_path / "run"), heldout=0.0, batch=8, epochs=3,
                             lr=1e-4, threads=1, progress=False))
    losses = [loss for _, loss in json.loads((tmp_path / "run" / "losses.json").read_text())]
    assert result.finished and result.steps == 9 == len(losses)
    first, last = float(np.mean(losses[:3])), float(np.mean(losses[-3:]))
    assert last < first - 0.1, losses
    report = (tmp_path / "run" / "report.md").read_text()
    assert "| toy | 24 |" in report and (tmp_path / "run" / "loss.png").stat().st_size > 1000


def test_killed_tune_resumes_to_the_same_adapter(toy_set, tuned, tmp_path):
    out = tmp_path / "killed"
    proc = _cli(_tune_args(toy_set, out))
    state = out / "checkpoint" / "state.json"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if state.is_file() and json.loads(state.read_text() or "{}").get("step", 0) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (out / SPEC_FILE).exists()
    resumed = _run_cli(_tune_args(toy_set, out))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for name in ("peft/adapter_model.safetensors", "adapter.gguf"):
        assert sha256_file(out / name) == sha256_file(tuned / name), name


def _prompts(model):
    fc = FactCheckingEvaluator(model)
    pairs = [(d, d) for d in FACTS] + [(d, UNRELATED) for d in FACTS] + [
        ("The Eiffel Tower was completed in 1889.", "The tower is 500 metres tall."),
        ("Alice bought three apples and two pears.", "Alice bought five pieces of fruit."),
    ]
    return [p for d, c in pairs for p in fc.prompts_for(EvaluationRequest(user_text=d, response_content=c))]


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def test_tuned_spec_loads_on_both_backends_and_they_agree(tuned, judge_model):
    spec = tuned / SPEC_FILE
    assert load_spec(spec).adapter.base == "gemma-3-270m"
    llama = load_model(spec, n_threads=1)
    torch_judge = load_model(spec, backend="transformers", device="cpu", n_threads=1)
    try:
        prompts = _prompts(llama)
        assert prompts == _prompts(torch_judge)
        a = [j.probabilities["Yes"] for j in llama.judge_many(prompts, ["Yes", "No"])]
        b = [j.probabilities["Yes"] for j in torch_judge.judge_many(prompts, ["Yes", "No"])]
        base = [j.probabilities["Yes"] for j in judge_model.judge_many(prompts, ["Yes", "No"])]
        dp = np.abs(np.array(a) - np.array(b))
        assert dp.mean() <= MAX_MEAN_DP_YES and np.quantile(dp, 0.9) <= MAX_Q90_DP_YES, dp
        assert max(abs(_logit(x) - _logit(y)) for x, y in zip(a, b)) <= MAX_DLOGIT
        assert np.abs(np.array(a) - np.array(base)).max() > 0.05  # the adapter is applied, not ignored
        # the label head still reads llama.cpp's hidden state, checked against the full output layer
        assert llama.backend.label_head_error is not None and llama.backend.label_head_error < 1e-3
        assert llama.backend.label_head_decodes > 0
    finally:
        llama.close()
        torch_judge.close()


def test_gguf_adapter_is_in_llama_cpp_format(tuned):
    import gguf

    reader = gguf.GGUFReader(str(tuned / "adapter.gguf"))

    def value(key):
        field = reader.fields[key]
        return field.contents() if hasattr(field, "contents") else field.parts[field.data[0]]

    assert value("general.type") == "adapter" and value("adapter.type") == "lora"
    assert float(value("adapter.lora.alpha")) == 32.0 and value("general.architecture") == "gemma3"
    tensors = {t.name: tuple(int(x) for x in t.shape) for t in reader.tensors}
    assert tensors["blk.9.attn_q.weight.lora_a"] == (640, 16)  # ggml order: (in, rank)
    assert tensors["blk.9.attn_q.weight.lora_b"] == (16, 1024)  # (rank, out)
    assert not any(name.startswith("blk.8.") for name in tensors)  # top half only
    prov = json.loads((tuned / PROVENANCE_FILE).read_text())
    assert prov["files"]["adapter.gguf"] == sha256_file(tuned / "adapter.gguf")


def test_adapter_sha256_is_checked_on_load(tuned, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tuned, copy, ignore=shutil.ignore_patterns("checkpoint"))
    with (copy / "adapter.gguf").open("ab") as fh:
        fh.write(b"\0")
    with pytest.raises(SpecError, match="sha256"):
        load_model(copy / SPEC_FILE, n_threads=1)


def test_shipping_a_run_keeps_the_gemma_terms_beside_it(tuned, tmp_path):
    """ship_adapter writes models/ID.toml and models/ID/ (half-precision weights, their sha256 in the spec and
    the provenance) and, for a Gemma derivative, the Gemma Terms beside it: a re-ship must not drop them."""
    from judgelab.tuning import ship_adapter

    models = tmp_path / "models"
    for _ in range(2):  # the first takes the packaged judge's copy of the terms, the second the folder's own
        spec_path = ship_adapter(tuned, models)
        spec = load_spec(spec_path)
        folder = models / spec.id
        prov = json.loads((folder / PROVENANCE_FILE).read_text(encoding="utf-8"))
        assert sha256_file(folder / "adapter.gguf") == prov["shipped"]["files"]["adapter.gguf"] == spec.adapter.gguf_sha256
        assert (folder / "GEMMA_TERMS.txt").read_text(encoding="utf-8") == (
            MODELS / "gemma-3-270m-judge" / "GEMMA_TERMS.txt").read_text(encoding="utf-8")
        assert "GEMMA_TERMS.txt" in (folder / "NOTICE").read_text(encoding="utf-8")


def test_shipping_keeps_the_task_prompt_the_run_was_trained_with(tuned, tmp_path):
    """A run trained with its own relevancy prompt (train_default_judge.py --judge-relevancy-prompt) was
    measured with it: the shipped spec asks the same prompt, not the base's default."""
    from judgelab.evaluators import evaluator_config
    from judgelab.tuning import ship_adapter

    run = tmp_path / "run"
    shutil.copytree(tuned, run)
    template = 'Document:\n{context}\nClaim:\nThe answer to "{query}" is: {response}'
    with (run / SPEC_FILE).open("a", encoding="utf-8") as fh:
        fh.write('\n[tasks.relevancy]\ntemplate = """' + template + '"""\n')
    assert load_spec(run / SPEC_FILE).tasks["relevancy"].template == template
    shipped = load_spec(ship_adapter(run, tmp_path / "models"))
    assert shipped.tasks["relevancy"].template == template
    assert evaluator_config(None, shipped, task="relevancy").template == template
    assert shipped.licence.count("derivative") == 1  # the licence line is written once, not inherited twice


# -- continued training (--init-adapter) ----------------------------------------


def test_init_adapter_starts_from_the_given_weights(toy_set, tuned, tmp_path):
    """One step at a vanishing learning rate from the fixture's adapter ends where that adapter is (a fresh
    LoRA would start with zero B matrices); the folder's weights, not its path, are in the resume hash."""
    from safetensors.numpy import load_file

    moved = tmp_path / "moved-peft"
    shutil.copytree(tuned / "peft", moved)
    config = TuneConfig(sets=(str(toy_set),), out=str(tmp_path / "run"), heldout=0.0, batch=4, max_steps=1, lr=1e-12,
                        threads=1, progress=False, init_adapter=str(moved))
    result = tune(config)
    start = load_file(str(tuned / "peft" / "adapter_model.safetensors"))
    end = load_file(str(result.out / "peft" / "adapter_model.safetensors"))
    assert start.keys() == end.keys()
    b_matrices = [k for k in start if "lora_B" in k]
    assert b_matrices and max(float(np.abs(start[k]).max()) for k in b_matrices) > 1e-4  # trained: not zero
    assert max(float(np.abs(start[k] - end[k]).max()) for k in start) < 1e-6
    prov = json.loads((result.out / PROVENANCE_FILE).read_text(encoding="utf-8"))
    assert prov["init_adapter_sha256"] == sha256_file(moved / "adapter_model.safetensors")
    at_origin = TuneConfig(sets=(str(toy_set),), out="elsewhere", heldout=0.0, batch=4, max_steps=1, lr=1e-12,
                           threads=1, progress=False, init_adapter=str(tuned / "peft"))
    assert at_origin.training_hash() == config.training_hash()
    fresh = TuneConfig(sets=(str(toy_set),), out="elsewhere", heldout=0.0, batch=4, max_steps=1, lr=1e-12)
    assert fresh.training_hash() != config.training_hash()


def test_error_init_adapter_of_another_rank(toy_set, tuned, tmp_path):
    _assert_user_error(_run_cli(_tune_args(toy_set, tmp_path / "o", "--rank", "8", "--init-adapter",
                                           str(tuned / "peft"))), "init_adapter", "r 16 (this run: 8)")


def test_error_init_adapter_folder_missing(toy_set, tmp_path):
    _assert_user_error(_run_cli(_tune_args(toy_set, tmp_path / "o", "--init-adapter", str(tmp_path / "nothing"))),
                       "init_adapter", "does not exist")


# -- bad input: one line, exit 2 -------------------------------------------------


def _assert_user_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("judgelab tune: error:")]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_error_a_set_with_one_class(toy_set, tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text("".join(ln + "\n" for ln in toy_set.read_text().splitlines() if '"label": 1' in ln))
    _assert_user_error(_run_cli(_tune_args(one, tmp_path / "o")), "only label 1", "both")


def test_error_every_row_too_long(toy_set, tmp_path):
    _assert_user_error(_run_cli(_tune_args(toy_set, tmp_path / "o", "--max-tokens", "16")),
                       "Every training row is longer than --max-tokens 16")


def test_error_unknown_target_module(toy_set, tmp_path):
    _assert_user_error(_run_cli(_tune_args(toy_set, tmp_path / "o", "--target-modules", "q_proj,qkv_fused")),
                       "qkv_fused", "q_proj")


def test_error_base_model_without_a_transformers_path(toy_set, tmp_path):
    _assert_user_error(_run_cli(_tune_args(toy_set, tmp_path / "o", "--model", "bespoke-minicheck-7b")),
                       "bespoke-minicheck-7b", "transformers")


def test_error_missing_peft(toy_set, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    code = ("import sys; sys.modules['peft'] = None; from judgelab.cli import main; "
            "sys.exit(main(sys.argv[1:]))")  # import peft now fails, as when it is not installed
    proc = subprocess.run([sys.executable, "-c", code, *_tune_args(toy_set, tmp_path / "o")],
                          capture_output=True, text=True, env=env, timeout=300)
    _assert_user_error(proc, "peft", "pip install 'judgelab[tune]'")


# -- the shipped default judge ---------------------------------------------------

MODELS = TESTS.parent / "models"


def test_shipped_adapter_matches_its_provenance():
    spec = load_spec(MODELS / "gemma-3-270m-judge.toml")
    folder = MODELS / "gemma-3-270m-judge"
    prov = json.loads((folder / PROVENANCE_FILE).read_text(encoding="utf-8"))
    shipped = prov["shipped"]["files"]
    assert sha256_file(folder / "adapter.gguf") == shipped["adapter.gguf"] == spec.adapter.gguf_sha256
    weights = folder / "peft" / "adapter_model.safetensors"
    assert sha256_file(weights) == shipped["peft/adapter_model.safetensors"] == spec.adapter.peft_sha256
    assert spec.adapter.base == "gemma-3-270m" and spec.adapter_path("gguf") == folder / "adapter.gguf"
    assert prov["data"] and all(len(d["sha256"]) == 64 for d in prov["data"])
    assert prov["tokens"] > 0 and prov["machine"] and "seed" in prov["config"]


def test_cached_top_layers_resume_to_the_same_adapter(toy_set, tmp_path):
    """--adapt-top 6 --cache memory over two epochs: stopped one step into the second epoch and resumed
    (an empty cache, refilled), the adapter is bit-for-bit the uninterrupted run's."""
    def config(out, **extra):
        return TuneConfig(sets=(str(toy_set),), out=str(tmp_path / out), heldout=0.0, batch=8, epochs=2, lr=1e-3,
                          threads=1, progress=False, layers="top-6", cache="memory", checkpoint_every=1, **extra)

    whole = tune(config("whole"))
    stopped = tune(config("resumed", stop_after=4))
    assert whole.finished and not stopped.finished and stopped.steps == 4
    resumed = tune(config("resumed"))
    assert resumed.finished and resumed.steps == whole.steps == 6
    name = "peft/adapter_model.safetensors"
    assert sha256_file(tmp_path / "resumed" / name) == sha256_file(tmp_path / "whole" / name)
    provenance = json.loads((tmp_path / "whole" / PROVENANCE_FILE).read_text())
    assert provenance["config"]["cache"] == "memory" and provenance["config"]["layers"] == "top-6"
    assert [t[0] for t in whole.timings] == list(range(1, 7))
