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


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The labelled sets in ../shared/data (skips when this checkout has none)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data folder {SHARED_DATA} is not present")
    return SHARED_DATA
