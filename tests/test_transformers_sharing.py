"""Prefix sharing and padding on the transformers backend (CPU, float32).

Prompts that share a long prefix (a document checked against several claims)
run the prefix once and only their suffixes over a copy of its key/values.
Answers must not move (to 1e-6 in probability) and each document token must
be computed once.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")

from judgelab.engine import load_model  # noqa: E402
from judgelab.engine._schedule import prefix_groups  # noqa: E402
from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator  # noqa: E402

DOCS = [
    "The Eiffel Tower was completed in 1889 for the World's Fair. It is 330 metres tall and stands in Paris.",
    "Water boils at 100 degrees Celsius at sea level. At higher altitudes it boils at lower temperatures.",
    "Alice bought three apples and two pears at the market on Saturday, then walked home along the river.",
]
CLAIMS = ["It was finished in 1889.", "It is in London.", "Boiling happens at 50 degrees.", "She bought fruit."]


@pytest.fixture(scope="module")
def hf():
    model = load_model("gemma-3-270m", backend="transformers", device="cpu", n_threads=1)
    yield model
    model.close()


def _prompts(model) -> list[list[int]]:
    evaluator = FactCheckingEvaluator(model)
    requests = [EvaluationRequest(user_text=d, response_content=c) for d in DOCS for c in CLAIMS]
    prompts = [p for r in requests for p in evaluator.prompts_for(r)]
    prompts.append(model.render("Is Paris in France?"))  # one prompt that shares no document
    return [model.tokenize(p) for p in prompts]


def _p_yes(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    return np.exp(z[:, 0]) / np.exp(z).sum(axis=1)


def test_shared_prefixes_give_the_same_answers_and_compute_each_document_once(hf):
    be = hf.backend
    labels = [hf.resolve_labels(("Yes", "No")).token_ids[0], hf.resolve_labels(("Yes", "No")).token_ids[1]]
    token_lists = _prompts(hf)
    shared_config = be.config
    try:
        be.config = dataclasses.replace(shared_config, share_prefixes=False)
        before = be.tokens_evaluated
        plain = be.label_logits(token_lists, labels)
        plain_tokens = be.tokens_evaluated - before
        be.config = shared_config
        before = be.tokens_evaluated
        shared = be.label_logits(token_lists, labels)
        shared_tokens = be.tokens_evaluated - before
    finally:
        be.config = shared_config
    assert np.max(np.abs(_p_yes(shared) - _p_yes(plain))) <= 1e-6
    assert np.max(np.abs(shared - plain)) <= 1e-3  # logits: float32 rounding only
    assert plain_tokens == sum(len(t) for t in token_lists)
    # each document's prompt prefix once, then each claim's own tokens
    ordered = sorted(token_lists)
    runs = prefix_groups(ordered, min_shared=be.config.min_shared_tokens)
    assert sum(1 for _, _, shared_n in runs if shared_n) == len(DOCS)
    expected = sum(
        (shared_n + sum(len(t) - shared_n for t in ordered[lo:hi])) if shared_n else sum(len(t) for t in ordered[lo:hi])
        for lo, hi, shared_n in runs
    )
    assert shared_tokens == expected < plain_tokens
    for doc in DOCS:  # the document's tokens are inside the shared prefix of its run
        assert any(shared_n > 0 and str(doc[:40]) in be.detokenize(ordered[lo][:shared_n]) for lo, _, shared_n in runs)


def test_evaluators_answer_the_same_with_and_without_sharing(hf):
    evaluator = FactCheckingEvaluator(hf)
    requests = [EvaluationRequest(user_text=d, response_content=c) for d in DOCS[:2] for c in CLAIMS[:3]]
    be = hf.backend
    shared_config = be.config
    try:
        be.config = dataclasses.replace(shared_config, share_prefixes=False)
        plain = [r.score for r in evaluator.evaluate_many(requests)]
    finally:
        be.config = shared_config
    shared = [r.score for r in evaluator.evaluate_many(requests)]
    # float32 rounding of other matmul shapes: measured 1.8e-6 here, the size of
    # batched-against-alone differences without sharing (issue 15: 3e-6)
    assert np.max(np.abs(np.array(shared) - np.array(plain))) <= 5e-6


def test_buckets_cap_padding(hf):
    be = hf.backend
    lengths = [10, 11, 12, 40, 41, 42, 200]
    prompts = [[5] * n for n in lengths]
    for bucket in be._buckets(prompts):
        longest = max(lengths[i] for i in bucket)
        padding = len(bucket) * longest - sum(lengths[i] for i in bucket)
        assert padding <= 0.125 * len(bucket) * longest


def test_packed_prompts_give_the_same_answers_without_padding(hf):
    be = hf.backend
    labels = list(hf.resolve_labels(("Yes", "No")).token_ids)
    words = "the quick brown fox jumps over the lazy dog near a quiet river".split()
    prompts = [hf.tokenize(hf.render(f"Is this about an animal? {' '.join(words[: 2 + i])}")) for i in range(8)]
    config = be.config
    try:
        be.config = dataclasses.replace(config, share_prefixes=False)
        padded = be.label_logits(prompts, labels)
        be.config = dataclasses.replace(config, share_prefixes=False, pack=True)
        passes, pads = be.forward_passes, be.tokens_padded
        packed = be.label_logits(prompts, labels)
        assert be.forward_passes - passes == 1 and be.tokens_padded == pads  # one row, no padding
    finally:
        be.config = config
    assert np.max(np.abs(_p_yes(packed) - _p_yes(padded))) <= 1e-6
