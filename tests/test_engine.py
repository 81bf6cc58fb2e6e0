"""The llama.cpp engine on the real gemma-3-270m GGUF: mechanics, not accuracy.

Tests whose behaviour depends on the tokenizer take ``any_judge`` and run on both
embedded judges (gemma-3-270m and smollm2-135m).
"""

from __future__ import annotations

import math
import threading

import pytest

from judgelab.engine import load_model
from judgelab.errors import ContextLengthError, JudgelabError, LabelError, SpecError

YES_NO = ("Yes", "No")

def test_probabilities_are_a_distribution(any_judge, engine_prompts):
    for prompt in engine_prompts:
        probs = any_judge.probabilities(prompt, YES_NO)
        assert set(probs) == set(YES_NO)
        assert all(0.0 <= p <= 1.0 for p in probs.values())
        assert math.isclose(sum(probs.values()), 1.0, abs_tol=1e-9)


def test_same_input_same_probability(judge_model, engine_prompts):
    first = judge_model.probabilities(engine_prompts[1], YES_NO)
    judge_model.probabilities(engine_prompts[2], YES_NO)  # something else in between
    second = judge_model.probabilities(engine_prompts[1], YES_NO)
    assert first == pytest.approx(second, abs=1e-6)


def test_batch_agrees_with_scoring_each_prompt_alone(any_judge, mixed_prompts):
    prompts = mixed_prompts(50)
    assert len(prompts) == 50
    empty = [p for p in prompts if not any_judge.tokenize(p)]  # "" on a model without a start token
    for p in empty:
        with pytest.raises(JudgelabError, match="empty after tokenisation"):
            any_judge.probabilities(p, YES_NO)
    prompts = [p for p in prompts if p not in empty]
    batch = any_judge.batch_probabilities(prompts, YES_NO)
    for prompt, b in zip(prompts, batch):
        any_judge.backend.reset_cache()
        single = any_judge.probabilities(prompt, YES_NO)
        for label in YES_NO:
            assert abs(single[label] - b[label]) <= 1e-4, (prompt, single, b)


def test_packed_batches_share_prefixes_and_stay_close(mixed_prompts):
    packed = load_model("gemma-3-270m", n_threads=2, packed=True)
    exact = load_model("gemma-3-270m", n_threads=2)
    try:
        prompts = mixed_prompts(50)
        got = packed.batch_probabilities(prompts, YES_NO)
        want = exact.batch_probabilities(prompts, YES_NO)
        worst = max(abs(g["Yes"] - w["Yes"]) for g, w in zip(got, want))
        assert worst <= 0.1, worst  # packed trades bit-identity for speed
        # both pay each distinct token once; a packed run may re-decode its first token
        assert packed.backend.tokens_evaluated <= exact.backend.tokens_evaluated + 2
    finally:
        packed.close()
        exact.close()


def test_generate_returns_exactly_one_label(any_judge, adversarial_prompts):
    for prompt in adversarial_prompts:
        text = any_judge.generate(any_judge.render(prompt), max_tokens=2, allowed=YES_NO)
        assert text in YES_NO, (prompt, text)
    # Other label sets too, including multi-letter and digit labels.
    assert any_judge.generate("Pick a letter:", allowed=("A", "B", "C", "D")) in {"A", "B", "C", "D"}
    assert any_judge.generate("Rate 1 to 5:", allowed=tuple("12345")) in set("12345")


def test_generate_picks_the_most_likely_label(judge_model, engine_prompts):
    prompt = engine_prompts[2]
    probs = judge_model.probabilities(prompt, YES_NO)
    assert judge_model.generate(prompt, allowed=YES_NO) == max(probs, key=probs.get)


def test_generate_needs_labels(judge_model):
    with pytest.raises(LabelError):
        judge_model.generate("Hello", allowed=[])


def test_labels_that_share_a_token_are_refused(any_judge):
    with pytest.raises(LabelError, match="not distinct"):
        any_judge.probabilities("x", ("Yes", "yes"))
    with pytest.raises(LabelError, match="at least two"):
        any_judge.probabilities("x", ("Yes",))


def test_variants_are_pooled(any_judge):
    resolved = any_judge.resolve_labels(YES_NO)
    yes_tokens = resolved.tokens_of(0)
    assert len(yes_tokens) >= 2  # "Yes" and " Yes" (and lower-case forms) are distinct tokens
    texts = {any_judge.backend.token_text(t).strip().lower() for t in yes_tokens}
    assert texts == {"yes"}


def test_prompt_longer_than_context_names_both_lengths(judge_model):
    long_prompt = "word " * (judge_model.n_ctx + 50)
    with pytest.raises(ContextLengthError) as info:
        judge_model.probabilities(long_prompt, YES_NO)
    err = info.value
    assert err.n_tokens > err.n_ctx == judge_model.n_ctx
    assert str(err.n_tokens) in str(err) and str(err.n_ctx) in str(err)


def test_shared_prefix_is_not_recomputed(any_judge):
    backend = any_judge.backend
    document = "Document: " + " ".join(f"Fact number {i} is about item {i}." for i in range(60))
    any_judge.probabilities(document + "\nClaim: item 3 exists. Answer:", YES_NO)
    before = backend.tokens_evaluated
    any_judge.probabilities(document + "\nClaim: item 99 exists. Answer:", YES_NO)
    new_tokens = backend.tokens_evaluated - before
    assert 0 < new_tokens < 20, new_tokens


def test_safe_from_several_threads(judge_model, engine_prompts):
    expected = judge_model.batch_probabilities(engine_prompts, YES_NO)
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            results[k] = [judge_model.probabilities(p, YES_NO) for p in engine_prompts]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for got in results.values():
        for g, e in zip(got, expected):
            assert g["Yes"] == pytest.approx(e["Yes"], abs=1e-4)


def test_unknown_model_id_lists_known_ones():
    with pytest.raises(SpecError, match="gemma-3-270m"):
        load_model("no-such-judge")


def test_unknown_backend_option_is_refused():
    with pytest.raises(TypeError, match="n_ctx"):
        load_model("gemma-3-270m", n_context=512)


def test_render_uses_the_spec_format(judge_model):
    text = judge_model.render("Is it?")
    assert text.endswith("Answer:")
    assert judge_model.spec.prompt.system in text


def test_complete_writes_greedy_text_and_stops(judge_model):
    text = judge_model.complete("The capital of France is", max_tokens=12, stop=["\n"])
    assert text and "\n" not in text
    again = judge_model.complete("The capital of France is", max_tokens=12, stop=["\n"])
    assert text == again  # greedy: deterministic
    with pytest.raises(ContextLengthError):
        judge_model.complete("x", max_tokens=judge_model.n_ctx + 1)


def test_reset_caches_forgets_prefixes_and_tokens(judge_model, engine_prompts):
    first = judge_model.probabilities(engine_prompts[0], YES_NO)
    assert len(judge_model._token_cache) > 0
    judge_model.reset_caches()
    assert len(judge_model._token_cache) == 0
    before = judge_model.backend.tokens_evaluated
    again = judge_model.probabilities(engine_prompts[0], YES_NO)
    # the whole prompt is decoded again, and gives the same answer
    assert judge_model.backend.tokens_evaluated - before == len(judge_model.tokenize(engine_prompts[0]))
    assert again == pytest.approx(first, abs=1e-9)


def test_info_states_the_model_facts(judge_model):
    info = judge_model.info()
    assert (info.id, info.family, info.backend) == ("gemma-3-270m", "gemma", "llama_cpp")
    assert info.n_ctx == judge_model.n_ctx
    assert info.architecture == "gemma3"
    assert info.quantization == "Q4_K_M"
    assert 200e6 < info.n_params < 300e6 and info.parameter_size.endswith("M")
    assert info.size_bytes and info.size_bytes > 100e6
    assert info.prompt_style == "raw" and info.prompt_template == judge_model.spec.prompt.raw_template
    with pytest.raises(AttributeError):
        info.id = "other"  # frozen
