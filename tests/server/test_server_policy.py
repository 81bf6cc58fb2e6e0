"""``judgelab serve --policy``: decisions on /v1/evaluate, the policy in other protocols, refusal at start-up."""

from __future__ import annotations

import httpx
import pytest

from judgelab.calibration import Policy
from judgelab.errors import PolicyMismatchError
from judgelab.evaluators import FactCheckingEvaluator, RelevancyEvaluator

DOC = "The Eiffel Tower is in Paris. It was completed in 1889."


def _policy(model, *, template_hash=None, spec_hash=None, lower=0.3, upper=0.7):
    return Policy(task="fact-check", lower=lower, upper=upper, alpha=0.1, delta=0.1, feasible=True, n=500,
                  n_units=250, unit_size=2, spec_hash=spec_hash or model.spec.spec_hash,
                  template_hash=template_hash or FactCheckingEvaluator(model).template_hash, model=model.id,
                  set="synthetic")


@pytest.fixture(scope="module")
def policy_server(judge_model):
    from judgelab.server import ServerConfig, ServerThread, create_app

    # a band wide enough that the real scores of the two claims below land on both sides of it
    app = create_app(judge_model, ServerConfig(policy=_policy(judge_model, lower=0.05, upper=0.95)))
    server = ServerThread(app, host="127.0.0.1", port=0).start()
    yield server
    server.stop()


def test_evaluate_with_a_policy_returns_the_decision(policy_server, judge_model):
    with httpx.Client(base_url=policy_server.url, timeout=120) as client:
        body = {"evaluator": "fact-checking", "request": {"user_text": DOC, "response_content": "The tower is in Paris."}}
        r = client.post("/v1/evaluate", json=body)
        assert r.status_code == 200, r.text
        meta = r.json()["metadata"]
        score = r.json()["score"]
        expected = "fail" if score < 0.05 else "pass" if score >= 0.95 else "abstain"
        assert meta["decision"] == expected and meta["alpha"] == 0.1 and meta["n"] == 500
        assert r.json()["passed"] is (expected == "pass")
        # relevancy asks another question: the policy does not apply to it
        r = client.post("/v1/evaluate", json={**body, "evaluator": "relevancy"})
        assert "decision" not in r.json()["metadata"]
        # the other protocols report the policy in their judgelab field
        r = client.post("/v1/chat/completions", json={"model": judge_model.id,
                                                       "messages": [{"role": "user", "content": "Is Paris in France?"}]})
        assert r.json()["judgelab"]["policy"]["alpha"] == 0.1
        assert "fact-checking" in r.json()["judgelab"]["policy"]["applies_to"]
        r = client.post("/api/generate", json={"model": judge_model.id, "prompt": "Is Paris in France?", "stream": False})
        assert r.json()["judgelab"]["policy"]["lower"] == 0.05


def test_evaluator_policy_decisions_and_abstain_passes(judge_model):
    policy = _policy(judge_model, lower=0.0, upper=1.01)  # abstains on every score
    ev = FactCheckingEvaluator(judge_model, policy=policy)
    from judgelab.evaluators import EvaluationRequest

    resp = ev.evaluate(EvaluationRequest(DOC, (), "The tower is in Rome."))
    assert resp.metadata["decision"] == "abstain" and resp.passed is False
    ev = FactCheckingEvaluator(judge_model, policy=policy, abstain_passes=True)
    assert ev.evaluate(EvaluationRequest(DOC, (), "The tower is in Rome.")).passed is True


def test_mismatched_policy_is_refused_at_start_up(judge_model):
    from judgelab.server import ServerConfig, create_app

    wrong_template = _policy(judge_model, template_hash="0123456789abcdef")
    with pytest.raises(PolicyMismatchError) as info:
        create_app(judge_model, ServerConfig(policy=wrong_template))
    assert "0123456789abcdef" in str(info.value) and FactCheckingEvaluator(judge_model).template_hash in str(info.value)
    wrong_spec = _policy(judge_model, spec_hash="feedfacefeedface")
    with pytest.raises(PolicyMismatchError) as info:
        create_app(judge_model, ServerConfig(policy=wrong_spec))
    assert "feedfacefeedface" in str(info.value) and judge_model.spec.spec_hash in str(info.value)
    with pytest.raises(PolicyMismatchError):
        RelevancyEvaluator(judge_model, policy=_policy(judge_model))


def test_serve_cli_refuses_a_mismatched_policy(judge_model, tmp_path, capsys):
    from judgelab.cli import main

    path = _policy(judge_model, template_hash="0123456789abcdef").save(tmp_path / "policy.json")
    assert main(["serve", "--model", judge_model.spec.id, "--policy", str(path), "--port", "0", "--threads", "1"]) == 2  # a user error: refused
    err = capsys.readouterr().err
    assert "0123456789abcdef" in err and "template hash" in err
