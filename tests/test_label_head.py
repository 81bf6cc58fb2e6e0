"""Label logits from the final hidden state instead of the full output layer.

The real gemma-3-270m GGUF, llama.cpp on CPU: the label head must give the
numbers the full output layer gives, be used when it does, and step aside
when it does not.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.engine import load_model
from judgelab.engine._label_head import _round_q8_0, _round_q8_k, load_label_head
from judgelab.weights import resolve_weights

YES_NO = ("Yes", "No")


@pytest.fixture(scope="module")
def full_layer_model():
    model = load_model("gemma-3-270m", n_threads=2, label_head=False)
    yield model
    model.close()


def _label_ids(model) -> list[int]:
    ids = list(model.resolve_labels(YES_NO).token_ids)
    return ids + [model.backend.tokenize(w, add_bos=False)[0] for w in (" the", " maybe", "\n")]


def test_label_logits_equal_the_full_output_layer(mixed_prompts, judge_model, full_layer_model):
    prompts = [judge_model.tokenize(p) for p in mixed_prompts(30)]
    ids = _label_ids(judge_model)
    got = judge_model.backend.label_logits(prompts, ids)
    want = full_layer_model.backend.label_logits(prompts, ids)
    assert judge_model.backend.label_head_error is not None
    assert judge_model.backend.label_head_error <= 1e-4
    assert judge_model.backend.label_head_decodes > 0  # the head was used, not the full layer
    assert full_layer_model.backend.label_head_decodes == 0
    assert np.max(np.abs(got - want)) <= 1e-4


def test_probabilities_do_not_depend_on_the_head(mixed_prompts, judge_model, full_layer_model):
    prompts = mixed_prompts(20)
    got = judge_model.batch_probabilities(prompts, YES_NO)
    want = full_layer_model.batch_probabilities(prompts, YES_NO)
    for g, w in zip(got, want):
        assert g["Yes"] == pytest.approx(w["Yes"], abs=1e-5)


def test_a_head_that_disagrees_is_not_used(mixed_prompts, full_layer_model):
    model = load_model("gemma-3-270m", n_threads=2)
    try:
        model.backend._head.softcap = 5.0  # a wrong output layer: logits squashed into [-5, 5]
        prompts = mixed_prompts(6)
        got = model.batch_probabilities(prompts, YES_NO)
        assert model.backend.label_head_error > 1e-3
        assert model.backend.label_head_decodes == 0
        want = full_layer_model.batch_probabilities(prompts, YES_NO)
        for g, w in zip(got, want):
            assert g["Yes"] == pytest.approx(w["Yes"], abs=1e-9)
    finally:
        model.close()


def test_full_vocabulary_logits_still_come_from_the_full_layer(judge_model):
    # generate()/complete() need every token's logit; the head must not cut them short
    tokens = judge_model.tokenize("The capital of France is")
    logits = judge_model.backend.next_logits(tokens)
    assert logits.shape[0] > 200_000
    assert np.isfinite(logits).all()
    assert judge_model.backend.detokenize([int(np.argmax(logits))]).strip() != ""


def test_reader_finds_the_output_rows_of_the_embedded_model():
    head = load_label_head(resolve_weights(_spec()))
    assert head is not None
    assert head.type_name == "Q8_0"  # gemma ties the output layer to the token embeddings
    assert head.n_embd == 640
    rows = head._weights([0, 1, 262_143])
    assert rows.shape == (3, 640)
    assert np.isfinite(rows).all()
    with pytest.raises(IndexError, match="outside"):
        head._weights([262_144])


def test_input_rounding_matches_ggml_block_formats():
    rng = np.random.default_rng(0)
    h = rng.normal(size=(2, 512)).astype(np.float32)
    h[1, :32] = 0.0  # an all-zero block stays zero
    q0 = _round_q8_0(h)
    assert np.all(q0[1, :32] == 0)
    # each block of 32 has at most 255 levels of one fp16 step, and stays close
    assert np.max(np.abs(q0 - h)) <= np.max(np.abs(h)) / 127 + 1e-6
    qk = _round_q8_k(h)
    # Q8_K maps the largest |x| of a block of 256 to -127 exactly
    block = h[0, :256]
    i = int(np.argmax(np.abs(block)))
    assert qk[0, i] == pytest.approx(block[i], rel=1e-6)
    assert np.max(np.abs(qk - h)) <= np.max(np.abs(h)) / 127 + 1e-6


def _spec():
    from judgelab.specs import load_spec

    return load_spec("gemma-3-270m")


def test_tensor_reader_is_found_where_libllama_does_not_export_it():
    # Windows' loader does not resolve symbols through a DLL's dependencies
    import types

    import llama_cpp

    from judgelab.engine._llama_hidden import _find_tensor_get

    no_export = types.SimpleNamespace(llama_cpp=types.SimpleNamespace(_lib=object()), __file__=llama_cpp.__file__)
    assert _find_tensor_get(no_export) is not None
    nowhere = types.SimpleNamespace(llama_cpp=types.SimpleNamespace(_lib=object()), __file__="/nonexistent/x.py")
    with pytest.raises(OSError, match="ggml_backend_tensor_get"):
        _find_tensor_get(nowhere)
