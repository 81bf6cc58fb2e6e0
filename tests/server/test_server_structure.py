"""The server's seams: one model behind the queue, one logprob helper, protocols registered by module."""

from __future__ import annotations

import math

import pytest

from judgelab.engine import BackendJudgeModel, Judgment
from judgelab.errors import ContextLengthError


def test_queued_model_wraps_the_one_model(judge_model):
    from judgelab.server import Batcher, QueuedModel, RequestTicket

    batcher = Batcher(judge_model, window=0.0)
    try:
        queued = QueuedModel(judge_model, batcher)
        assert not isinstance(queued, BackendJudgeModel) and queued.model is judge_model  # no second cache or lock
        prompt = judge_model.render("Is ice cold?")
        assert queued.tokenize(prompt) == judge_model.tokenize(prompt)
        got = queued.judge(prompt, ("Yes", "No"))
        assert got.probabilities["Yes"] == pytest.approx(judge_model.judge(prompt, ("Yes", "No")).probabilities["Yes"],
                                                         abs=1e-4)
        # the engine's own context check refuses a long prompt before anything is queued
        with pytest.raises(ContextLengthError):
            queued.judge(judge_model.render("word " * (judge_model.n_ctx + 50)), ("Yes", "No"))
        # a request's ticket counts its prompts across calls
        ticket = RequestTicket(max_prompts=2)
        per_request = queued.for_request(ticket)
        per_request.judge_many([prompt, prompt], ("Yes", "No"))
        with pytest.raises(Exception, match="--max-request-prompts"):
            per_request.judge(prompt, ("Yes", "No"))
    finally:
        batcher.close()


def test_logprobs_are_ranked_and_clamped_once_for_both_protocols():
    from judgelab.server._answers import NEVER, judgelab_field, label_logprobs

    j = Judgment(label="Yes", probability=1.0, probabilities={"Yes": 1.0, "No": 0.0},
                 logprobs={"Yes": 0.0, "No": -math.inf})
    chosen, ranked = label_logprobs(j, 2)
    assert chosen == ("Yes", 0.0) and ranked == [("Yes", 0.0), ("No", NEVER)]
    assert label_logprobs(j, None)[1] == []
    assert judgelab_field(j, ("Yes", "No"), ["seed"])["ignored"] == ["seed"]


def test_every_protocol_module_registers_its_own_routes(judge_model):
    from judgelab.server import create_app
    from judgelab.server._app import PROTOCOLS

    app = create_app(judge_model)
    try:
        for module in PROTOCOLS:
            assert callable(module.register) and module.router.routes
        assert {"/api/chat", "/v1/chat/completions", "/v1/systemone", "/v1/evaluate", "/v1/decisions",
                "/healthz"} <= app.state.routes
        assert app.state.judge.capabilities == ["completion", "decision"]  # _decisions.register adds "decision"
    finally:
        app.state.judge.close()
