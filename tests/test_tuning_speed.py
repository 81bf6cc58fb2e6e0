"""The training-speed settings of ``judgelab tune`` on a tiny random-weight Gemma 3 built here (no downloads):
the cached lower-layer forward gives the full forward's label log-probabilities and LoRA gradients
(left padding, sliding-window and global layers, rotary positions), a warm cache gives bit-for-bit what
a cold one does (so a resumed run trains the same adapter), nothing below the first adapted layer is
recorded by autograd, and bf16 autocast keeps LoRA weights, gradients, optimizer state and the label
head in float32.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")
pytest.importorskip("peft", reason="needs the tune extra: pip install 'judgelab[tune]'")
transformers = pytest.importorskip("transformers")

from judgelab.errors import ParameterError  # noqa: E402
from judgelab.tuning import HiddenCache, LabelReader, SplitForward, TuneConfig, attach_lora, check_split  # noqa: E402

N_LAYERS = 6
SLIDING = 4  # shorter than the prompts, so the sliding-window layers see a different mask than the global one
LABEL_IDS, OWNER = [5, 6, 7], [0, 0, 1]  # "Yes" with two variants, "No"
PROMPTS = [[2, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22], [2, 30, 31, 32, 33, 34, 35],
           [2, 40, 41, 42, 43, 44, 45, 46, 47, 48], [2, 50, 51, 52, 53]]


def _tiny_lm(adapt_top: int = 3):
    """A 6-layer Gemma 3 (five sliding-window layers, then a global one) with random LoRA weights on the top layers."""
    torch.manual_seed(0)
    config = transformers.Gemma3TextConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=N_LAYERS, num_attention_heads=2,
        num_key_value_heads=1, head_dim=16, sliding_window=SLIDING, max_position_embeddings=64,
        layer_types=["sliding_attention"] * 5 + ["full_attention"], final_logit_softcapping=30.0,
    )
    lm = transformers.Gemma3ForCausalLM(config).float().eval()
    wrapped = attach_lora(lm, TuneConfig(sets=("rows.jsonl",), out="unused", layers=f"top-{adapt_top}"), "tiny")
    with torch.no_grad():
        for p in wrapped.parameters():
            if p.requires_grad:  # LoRA B starts at zero; random values make every gradient non-trivial
                p.copy_(torch.randn_like(p) * 0.2)
    assert config.layer_types[:N_LAYERS] == ["sliding_attention"] * 5 + ["full_attention"]
    return lm, wrapped


def _reader(lm, split=None):
    return LabelReader(lm, LABEL_IDS, OWNER, 2, split)


def _loss_and_grads(reader, wrapped):
    wrapped.zero_grad(set_to_none=True)
    logp = reader.log_probs(PROMPTS)
    (-(logp[:, 0].sum() + logp[1:3, 1].sum())).backward()
    grads = {n: p.grad.clone() for n, p in wrapped.named_parameters() if p.requires_grad}
    return logp.detach(), grads


def test_cached_lower_layers_give_the_full_forward_logits_and_gradients():
    lm, wrapped = _tiny_lm(adapt_top=3)
    full_logp, full_grads = _loss_and_grads(_reader(lm), wrapped)
    cache = HiddenCache(2**20)
    split = SplitForward(lm.get_decoder(), 3, cache)
    split_logp, split_grads = _loss_and_grads(_reader(lm, split), wrapped)
    assert len(cache) == len(PROMPTS)
    assert torch.allclose(full_logp, split_logp, atol=1e-5, rtol=0), (full_logp - split_logp).abs().max()
    assert full_grads.keys() == split_grads.keys() and len(full_grads) == 3 * 7 * 2  # 3 layers x 7 modules x A, B
    for name, g in full_grads.items():
        assert g.abs().max() > 0, name
        assert torch.allclose(g, split_grads[name], atol=1e-5, rtol=1e-4), (name, (g - split_grads[name]).abs().max())
    # every position, not only the last: the padded batch's masks and positions are the full forward's
    decoder = lm.get_decoder()
    prompt = PROMPTS[0]
    with torch.no_grad():
        ids = torch.tensor([prompt])
        full = decoder(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=False).last_hidden_state
        two_pass = split.last_hidden(PROMPTS)[0]
    assert torch.allclose(full[0], two_pass, atol=1e-5), (full[0] - two_pass).abs().max()
    assert check_split(decoder, split, PROMPTS[1]) < 1e-5


def test_the_check_refuses_a_split_that_does_not_reproduce_the_full_forward():
    lm, _ = _tiny_lm(adapt_top=3)
    decoder = lm.get_decoder()
    wrong = SplitForward(decoder, 3, None)
    wrong.lower = wrong.lower[:1]  # skips layer 0 only: layers 1-2 would run twice
    with pytest.raises(Exception, match="does not reproduce the full forward"):
        check_split(decoder, wrong, PROMPTS[0])


def test_a_warm_cache_gives_what_a_cold_one_does_bit_for_bit():
    lm, wrapped = _tiny_lm(adapt_top=2)
    cache = HiddenCache(2**20)
    reader = _reader(lm, SplitForward(lm.get_decoder(), 4, cache))
    cold_logp, cold_grads = _loss_and_grads(reader, wrapped)
    assert cache.stats()["misses"] == len(PROMPTS) and cache.hits == 0
    warm_logp, warm_grads = _loss_and_grads(reader, wrapped)  # a later epoch
    assert cache.hits == len(PROMPTS)
    fresh_logp, fresh_grads = _loss_and_grads(_reader(lm, SplitForward(lm.get_decoder(), 4, HiddenCache(2**20))),
                                              wrapped)  # a resumed run: the cache starts empty
    assert torch.equal(cold_logp, warm_logp) and torch.equal(cold_logp, fresh_logp)
    for name, g in cold_grads.items():
        assert torch.equal(g, warm_grads[name]) and torch.equal(g, fresh_grads[name]), name


def test_the_cache_bound_is_kept_and_overflow_is_recomputed():
    lm, wrapped = _tiny_lm(adapt_top=3)
    one = 32 * 4 * len(PROMPTS[0])  # hidden size x float32 bytes x tokens
    cache = HiddenCache(one)
    reader = _reader(lm, SplitForward(lm.get_decoder(), 3, cache))
    first, _ = _loss_and_grads(reader, wrapped)
    again, _ = _loss_and_grads(reader, wrapped)
    assert len(cache) == 1 and cache.bytes == one and cache.refused == 2 * (len(PROMPTS) - 1)
    assert torch.equal(first, again)


def test_nothing_below_the_first_adapted_layer_is_recorded_by_autograd():
    lm, wrapped = _tiny_lm(adapt_top=2)
    decoder = lm.get_decoder()
    entering: list = []
    handle = decoder.layers[4].register_forward_pre_hook(lambda m, args: entering.append(args[0]))
    try:
        _reader(lm).log_probs(PROMPTS)
        _reader(lm, SplitForward(decoder, 4, HiddenCache(2**20))).log_probs(PROMPTS)
    finally:
        handle.remove()
    assert len(entering) == 2 + len(PROMPTS)  # the full forward, one lower pass per prompt, the upper pass
    assert all(not h.requires_grad and h.grad_fn is None for h in entering)
    lora_layers = {int(n.split("layers.")[1].split(".")[0]) for n, p in wrapped.named_parameters() if p.requires_grad}
    assert lora_layers == {4, 5}


def test_bf16_autocast_keeps_lora_gradients_optimizer_and_label_head_in_float32():
    lm, wrapped = _tiny_lm(adapt_top=3)
    reader = _reader(lm)
    params = [p for p in wrapped.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logp = reader.log_probs(PROMPTS)
        hidden = reader._last_hidden(PROMPTS)
    (-logp[:, 0].sum()).backward()
    optimizer.step()
    assert logp.dtype == torch.float32
    # the head in float32 on the (autocast) final hidden state: bf16 rounding of ~20-sized logits would be ~0.1
    weight = lm.get_output_embeddings().weight[LABEL_IDS].float()
    logits = torch.tanh(hidden.detach().float() @ weight.T / 30.0) * 30.0
    pooled = torch.stack([torch.logsumexp(logits[:, :2], -1), logits[:, 2]], -1)
    assert torch.allclose(logp.detach(), torch.log_softmax(pooled, -1), atol=1e-5)
    assert all(p.dtype == torch.float32 and p.grad is not None and p.grad.dtype == torch.float32 for p in params)
    states = [t for s in optimizer.state.values() for t in s.values() if torch.is_tensor(t) and t.numel() > 1]
    assert len(states) == 2 * len(params) and all(t.dtype == torch.float32 for t in states)


def test_top_k_layers_and_the_resume_hash():
    config = TuneConfig(sets=("a.jsonl",), out="o", layers="top-6")
    assert config.layer_indices(18) == list(range(12, 18))
    assert TuneConfig(sets=("a.jsonl",), out="o", layers="top-half").layer_indices(18) == list(range(9, 18))
    with pytest.raises(ParameterError, match="top-K with K at most 4"):
        config.layer_indices(4)
    with pytest.raises(ParameterError, match="'top-K'"):
        TuneConfig(sets=("a.jsonl",), out="o", layers="top-0")
    with pytest.raises(ParameterError, match="'none' or 'memory'"):
        TuneConfig(sets=("a.jsonl",), out="o", cache="disk")
    # runs checkpointed before these settings existed keep their hash (values computed with that code)
    assert TuneConfig(sets=("a.jsonl",), out="o").training_hash() == "4a5bb7470f7d60a3"
    assert TuneConfig(sets=("a.jsonl", "b"), out="o", autocast="bf16", layers="2-5",
                      cache_mb=7).training_hash() == "9d3a0295feb582c0"
    assert TuneConfig(sets=("a.jsonl",), out="o", cache="memory").training_hash() != "4a5bb7470f7d60a3"
