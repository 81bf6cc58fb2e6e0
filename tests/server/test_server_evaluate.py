"""judgelab's own /v1/evaluate and /v1/evaluate/batch: Spring AI's evaluators as JSON."""

from __future__ import annotations

import pytest

DOC = "The Eiffel Tower was completed in 1889."


def test_evaluate_fact_checking_matches_the_library(http, judge_model):
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    body = {"evaluator": "fact-checking", "threshold": 0.6,
            "request": {"user_text": DOC, "response_content": "It was finished in 1889."}}
    r = http.post("/v1/evaluate", json=body)
    assert r.status_code == 200, r.text
    data = r.json()
    direct = FactCheckingEvaluator(judge_model, threshold=0.6).evaluate(
        EvaluationRequest(user_text=DOC, response_content="It was finished in 1889."))
    assert data["score"] == pytest.approx(direct.score, abs=1e-4)
    assert data["passed"] == direct.passed and data["metadata"]["threshold"] == 0.6
    assert data["feedback"] and data["metadata"]["evaluator"] == "fact-checking"


def test_evaluate_batch(http):
    body = {
        "evaluator": "relevancy",
        "requests": [
            {"user_text": "When was the tower finished?", "data_list": [DOC], "response_content": "In 1889."},
            {"user_text": "When was the tower finished?", "data_list": [{"text": DOC, "metadata": {"id": 1}}],
             "response_content": "Bananas are yellow."},
        ],
    }
    r = http.post("/v1/evaluate/batch", json=body)
    assert r.status_code == 200, r.text
    responses = r.json()["responses"]
    assert len(responses) == 2
    for response in responses:
        assert 0.0 <= response["score"] <= 1.0 and response["metadata"]["evaluator"] == "relevancy"
    minicheck = http.post("/v1/evaluate", json={"evaluator": "bespoke-minicheck",
                                                "request": {"user_text": DOC, "response_content": "1889."}})
    assert minicheck.status_code == 200 and minicheck.json()["metadata"]["evaluator"] == "bespoke-minicheck"
