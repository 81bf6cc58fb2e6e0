"""A long prompt evaluated in pieces, other prompts judged in between: same numbers, no token computed twice.

With the real GGUF model: the engine's ``prefill`` (the llama.cpp backend parks the interrupted
prompt's KV cache in host memory), and the server's ``Batcher``, which gives a prompt longer than
``turn_tokens`` turns of its own so that a short request runs between its pieces.

The equalities below are exact on purpose, and hold by construction on any CPU: every prompt is
decoded in pieces that depend on its own tokens only, whatever was cached or parked, and each of
its tokens sits in the KV cell of its own position (docs/engine.md, "Same numbers"). They are not
a claim that llama.cpp's kernels round alike for every batch shape: on an AVX-512 machine they do
not sum attention alike for a prompt shifted to other cells, which is what the first test caught.
"""

from __future__ import annotations

import threading

import pytest

from judgelab.server import Batcher

LABELS = ["Yes", "No"]


def _long(model, n=60, claim="The sky is green.", shift=0):
    doc = " ".join(f"Report {i} says the sky over town {(i + shift) % 13} was blue that day." for i in range(n))
    return model.render(f"Document: {doc}\nClaim: {claim}\nAnswer Yes or No.")


def _short(model, q="Is ice cold?"):
    return model.render(f"{q} Answer Yes or No.")


def _shared(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.fixture
def model(judge_model):
    if not judge_model.can_prefill:
        pytest.skip("this backend evaluates prompts whole")
    judge_model.reset_caches()
    yield judge_model
    judge_model.reset_caches()


def test_pieces_with_a_prompt_between_give_the_same_numbers_and_compute_each_token_once(model):
    long, short = _long(model), _short(model)
    alone_long = model.judge(long, LABELS)
    model.reset_caches()
    alone_short = model.judge(short, LABELS)
    model.reset_caches()
    tl, ts = model.tokenize(long), model.tokenize(short)
    assert len(tl) > 3 * 256
    before = model.backend.tokens_evaluated
    left = model.prefill(long, 256)
    done = len(tl) - left
    assert 0 < done <= 256
    between = model.judge(short, LABELS)  # cuts sequence 0 short: the long prompt's cells are parked
    assert model.backend.parked_tokens == done
    while True:  # whole pieces, never the one holding the last token: that one is the judgment's
        now = model.prefill(long, 256)
        if now == left:
            break
        left = now
    assert 1 <= left <= 256
    end = model.judge(long, LABELS)
    assert model.backend.parked_tokens == 0
    # every token of the long prompt once; the short one at most whole
    spent = model.backend.tokens_evaluated - before
    assert len(tl) + len(ts) - _shared(tl, ts) <= spent <= len(tl) + len(ts)
    assert end.probabilities == alone_long.probabilities  # bit-identical, not just close
    assert between.probabilities == alone_short.probabilities


def test_interrupted_prompts_that_do_not_fit_beside_each_other_are_dropped_not_overflowed(model):
    """Parks are bounded (the cache's cells, in host memory): the oldest is dropped and evaluated again.

    Each prompt comes back to an empty cache, its cells at their own positions, so even three
    interleaved prompts are judged exactly as alone (the server evaluates one at a time in pieces).
    """
    prompts = [_long(model, n=60, shift=k) for k in range(3)]  # other documents: few shared cells
    sizes = [len(model.tokenize(p)) for p in prompts]
    assert sum(sizes) > model.n_ctx + 512  # more than the cache holds (n_ctx + n_batch cells)
    expected = []
    for p in prompts:
        model.reset_caches()
        expected.append(model.judge(p, LABELS).probabilities)
    model.reset_caches()
    for p in prompts:  # three prompts, each interrupted most of the way through
        model.prefill(p, sizes[0] - 40)
    assert model.backend.parked_tokens <= model.n_ctx + 512
    got = [model.judge(p, LABELS) for p in prompts]
    assert [g.probabilities for g in got] == expected


def test_batcher_runs_a_short_request_between_the_pieces_of_a_long_prompt(model):
    long, other, short = _long(model, n=70), _long(model, n=50, claim="Town 3 is grey."), _short(model)
    expected = {}
    for p in (long, other, short):
        model.reset_caches()
        expected[p] = model.judge(p, LABELS).probabilities
    model.reset_caches()
    tl = model.tokenize(long)
    order: list[str] = []
    pieces: list[int] = []
    real_prefill = model.prefill
    arrived = threading.Event()

    def watched(prompt, max_tokens):  # record each piece; the first waits until the other requests are queued
        left = real_prefill(prompt, max_tokens)
        pieces.append(left)
        if len(pieces) == 1:
            arrived.wait(60)
        return left

    model.prefill = watched
    batcher = Batcher(model, window=0.0, turn_tokens=128)
    try:
        futures = {"long": batcher.submit([long], LABELS)}
        while not pieces:
            threading.Event().wait(0.01)
        futures["other"] = batcher.submit([other], LABELS)  # a second long request: waits for the first's pieces
        futures["short"] = batcher.submit([short], LABELS)
        for name, f in futures.items():
            f.add_done_callback(lambda f, name=name: order.append(name))
        arrived.set()
        got = {name: f.result(600)[0] for name, f in futures.items()}
    finally:
        batcher.close()
        del model.prefill
    assert order[0] == "short" and order.index("long") < order.index("other"), order
    assert len(tl) - 128 <= pieces[0] < len(tl)  # pieces of at most --turn-tokens
    assert got["long"].probabilities == expected[long]  # bit-identical to each prompt alone
    assert got["other"].probabilities == expected[other]
    assert got["short"].probabilities == expected[short]
