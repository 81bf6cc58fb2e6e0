"""What the llama.cpp backend does with n_gpu_layers (no GPU in CI: the decision and the CPU build)."""

from __future__ import annotations

import logging

import pytest

from judgelab.engine import LlamaCppConfig, load_model
from judgelab.engine._llama_config import gpu_settings


def test_gpu_offload_switches_the_label_head_off_and_says_so():
    use_head, note = gpu_settings(True, LlamaCppConfig(model_path="m.gguf", n_gpu_layers=-1))
    assert use_head is False
    assert "label head off" in note and "all layers" in note and "bit-identical" in note
    use_head, note = gpu_settings(False, LlamaCppConfig(model_path="m.gguf"))
    assert use_head is True and note == ""


def test_a_cpu_build_asked_to_offload_runs_on_cpu_and_says_how_to_build(caplog):
    import llama_cpp

    if llama_cpp.llama_supports_gpu_offload():  # pragma: no cover - a GPU build
        pytest.skip("this llama-cpp-python build offloads to a GPU; the test checks what a CPU build says")
    with caplog.at_level(logging.INFO, logger="judgelab.engine._llama_backend"):
        model = load_model("gemma-3-270m", n_threads=1, n_gpu_layers=-1, n_ctx=256)
    try:
        assert "GGML_CUDA=on" in caplog.text
        assert model.info().device == "cpu"
        assert model.backend._capture is not None  # the label head stays on for CPU
    finally:
        model.close()
