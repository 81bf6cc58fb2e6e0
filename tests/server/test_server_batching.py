"""Micro-batching: concurrent requests give the sequential answers, each job runs once, shutdown drains."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from judgelab.errors import ContextLengthError

MODEL = "gemma-3-270m"
CLAIMS = ["Paris is in France.", "Fish can fly.", "Ice is cold.", "The sun is dark."]


def _chat(client: httpx.Client, claim: str) -> dict:
    r = client.post("/api/chat", json={"model": MODEL, "stream": False,
                                       "messages": [{"role": "user", "content": f"True or false: {claim}"}]})
    assert r.status_code == 200, r.text
    return r.json()


def test_64_concurrent_requests_equal_sequential_answers(base_url, api_key):
    headers = {"Authorization": f"Bearer {api_key}"}
    limits = httpx.Limits(max_connections=64)
    with httpx.Client(base_url=base_url, headers=headers, timeout=300, limits=limits) as client:
        before = client.get("/metrics").json()
        sequential = {claim: _chat(client, claim)["judgelab"] for claim in CLAIMS}
        work = [CLAIMS[i % len(CLAIMS)] for i in range(64)]
        with ThreadPoolExecutor(max_workers=64) as pool:
            concurrent = list(pool.map(lambda c: _chat(client, c), work))
        after = client.get("/metrics").json()
    for claim, data in zip(work, concurrent):
        expected = sequential[claim]
        assert data["message"]["content"] == expected["label"]
        # the engine's results do not depend on how requests were batched together
        assert data["judgelab"]["probabilities"]["Yes"] == pytest.approx(expected["probabilities"]["Yes"], abs=1e-4)
    # every request judged exactly once: 8 sequential + 64 concurrent prompts
    assert after["judgments"] - before["judgments"] == len(CLAIMS) + 64
    # and the concurrent ones shared batches
    assert after["batches"] - before["batches"] < len(CLAIMS) + 64


class _Counting:
    """Forwards to the real model, counting the prompts each judge_many receives."""

    def __init__(self, model):
        self.model = model
        self.calls: list[int] = []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def judge_many(self, prompts, labels):
        self.calls.append(len(prompts))
        return self.model.judge_many(prompts, labels)


def test_batcher_runs_each_job_once_and_isolates_a_bad_prompt(judge_model):
    from judgelab.server import Batcher, BatcherClosedError

    counting = _Counting(judge_model)
    batcher = Batcher(counting, window=0.05, max_prompts=64)
    gate = threading.Event()
    blocker = batcher.call(lambda m: gate.wait(30))  # hold the worker so the jobs below queue up
    prompts = [judge_model.render(f"Is {w} a colour?") for w in ("red", "dog", "blue")]
    futures = [batcher.submit([p], ("Yes", "No")) for p in prompts]
    too_long = batcher.submit([judge_model.render("word " * (judge_model.n_ctx + 50))], ("Yes", "No"))
    gate.set()
    assert blocker.result(60) is True
    results = [f.result(120)[0] for f in futures]
    with pytest.raises(ContextLengthError):
        too_long.result(60)
    batcher.close()
    assert counting.calls == [3]  # the three good prompts in one judge_many call; the long one never ran
    direct = judge_model.judge_many(prompts, ("Yes", "No"))
    for got, want in zip(results, direct):
        assert got.label == want.label
        assert got.probabilities["Yes"] == pytest.approx(want.probabilities["Yes"], abs=1e-4)
    with pytest.raises(BatcherClosedError):
        batcher.submit(prompts[:1], ("Yes", "No"))


def test_batcher_close_finishes_queued_jobs(judge_model):
    from judgelab.server import Batcher

    counting = _Counting(judge_model)
    batcher = Batcher(counting, window=0.0)
    gate = threading.Event()
    blocker = batcher.call(lambda m: gate.wait(30))  # hold the worker so the jobs below are queued
    prompts = [judge_model.render(f"Is {n} even?") for n in (2, 3)]
    futures = [batcher.submit([p], ("Yes", "No")) for p in prompts]
    closer = threading.Thread(target=batcher.close)
    closer.start()
    assert not any(f.done() for f in futures)  # still queued behind the blocker when close() starts
    gate.set()
    closer.join(120)
    assert not closer.is_alive() and blocker.result(0) is True
    assert counting.calls, "close() returned without judging the queued jobs"
    direct = judge_model.judge_many(prompts, ("Yes", "No"))
    for f, want in zip(futures, direct):
        got = f.result(0)[0]  # done by the time close() returned: no waiting here
        assert got.label == want.label
        assert got.probabilities["Yes"] == pytest.approx(want.probabilities["Yes"], abs=1e-4)
