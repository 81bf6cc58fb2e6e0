"""Spring AI style evaluators on the real gemma-3-270m judge."""

from __future__ import annotations

import pytest

from judgelab.errors import TemplateError
from judgelab.evaluators import Document, EvaluationRequest, EvaluationResponse, Evaluator, FactCheckingEvaluator, RelevancyEvaluator, evaluate_many
from judgelab.evaluators._chunking import chunk_text, split_sentences

DOC = "The Eiffel Tower was completed in 1889. It is 330 metres tall."


def test_request_wraps_strings_as_documents():
    req = EvaluationRequest("q", ["a", Document("b", {"k": 1}), "  "], "r")
    assert all(isinstance(d, Document) for d in req.data_list)
    assert req.documents_text == ["a", "b"]
    with pytest.raises(TypeError):
        EvaluationRequest("q", [42], "r")


def test_fact_checking_response_shape(judge_model):
    ev = FactCheckingEvaluator(judge_model)
    assert isinstance(ev, Evaluator)
    res = ev.evaluate(EvaluationRequest(user_text=DOC, response_content="The tower was completed in 1889."))
    assert isinstance(res, EvaluationResponse)
    assert 0.0 <= res.score <= 1.0
    assert res.passed == (res.score >= 0.5)
    assert res.feedback and "P(yes)" in res.feedback
    meta = res.metadata
    assert meta["model"] == "gemma-3-270m"
    # keyed by the label words as the spec and the engine write them, with the engine's numbers
    prompt = ev.prompts_for(EvaluationRequest(user_text=DOC, response_content="The tower was completed in 1889."))[0]
    assert meta["probabilities"] == pytest.approx(judge_model.judge(prompt, ("Yes", "No")).probabilities)
    assert set(meta["probabilities"]) == {"Yes", "No"} and res.detail.probabilities == meta["probabilities"]
    assert meta["probabilities"]["Yes"] == pytest.approx(res.score) == meta["raw_score"]
    assert meta["chunks"] == [pytest.approx(res.score)]
    assert meta["prompt_tokens"] > 0 and meta["spec_hash"]


def test_fact_checking_document_roles(judge_model):
    """user_text is the document; data_list, when given, is used instead."""
    ev = FactCheckingEvaluator(judge_model)
    from_user_text = ev.evaluate(EvaluationRequest(user_text=DOC, response_content="It is 330 metres tall."))
    from_data_list = ev.evaluate(
        EvaluationRequest(user_text="ignored question", data_list=[DOC], response_content="It is 330 metres tall.")
    )
    assert from_user_text.score == pytest.approx(from_data_list.score, abs=1e-6)
    probe = ev.prompts_for(EvaluationRequest(user_text=DOC, response_content="CLAIM-X"))[0]
    assert DOC in probe and "CLAIM-X" in probe
    assert probe.index(DOC) < probe.index("CLAIM-X")


def test_threshold_decides_passed(judge_model):
    req = EvaluationRequest(user_text=DOC, response_content="The tower is 330 metres tall.")
    score = FactCheckingEvaluator(judge_model).evaluate(req).score
    assert FactCheckingEvaluator(judge_model, threshold=0.0).evaluate(req).passed
    assert not FactCheckingEvaluator(judge_model, threshold=min(1.0, score + 1e-3)).evaluate(req).passed


def test_evaluate_many_matches_single(judge_model):
    ev = FactCheckingEvaluator(judge_model)
    requests = [
        EvaluationRequest(user_text=DOC, response_content=c)
        for c in ["It was completed in 1889.", "It was completed in 1925.", "It is 330 metres tall.", "It is in Rome."]
    ]
    many = evaluate_many(ev, requests)
    for req, res in zip(requests, many):
        assert ev.evaluate(req).score == pytest.approx(res.score, abs=1e-4)


def test_minicheck_prompt(judge_model):
    ev = FactCheckingEvaluator.for_bespoke_minicheck(judge_model)
    prompt = ev.prompts_for(EvaluationRequest(user_text="DOC-TEXT", response_content="CLAIM-TEXT"))[0]
    assert "Document: DOC-TEXT\nClaim: CLAIM-TEXT" in prompt
    assert "Determine whether the provided claim is consistent" in prompt
    assert ev.evaluate(EvaluationRequest(user_text=DOC, response_content="It is tall.")).metadata["evaluator"] == "bespoke-minicheck"


def test_long_document_is_chunked_and_scored_by_best_chunk(judge_model):
    filler = " ".join(
        f"Record {i}: the warehouse in district {i} stores {i * 3} crates of apples." for i in range(400)
    )
    n_tokens = judge_model.count_tokens(filler)
    assert n_tokens >= 3 * judge_model.n_ctx
    ev = FactCheckingEvaluator(judge_model)
    req = EvaluationRequest(user_text=filler, response_content="District 7 stores 21 crates of apples.")
    prompts = ev.prompts_for(req)
    assert len(prompts) >= 3
    assert all(len(judge_model.tokenize(p)) <= judge_model.n_ctx for p in prompts)
    res = ev.evaluate(req)
    chunks = res.metadata["chunks"]
    assert len(chunks) == len(prompts)
    assert res.score == pytest.approx(max(chunks))
    assert "chunks" in res.feedback


def test_chunking_keeps_all_text():
    text = "One. Two three! Four? " * 50
    count = lambda s: len(s.split())  # noqa: E731 - a word counter stands in for a tokenizer
    chunks = chunk_text(text, 10, count)
    assert all(count(c) <= 10 for c in chunks)
    assert " ".join(" ".join(chunks).split()) == " ".join(text.split())
    assert split_sentences("A b. C d? E")[0] == "A b. "


def test_relevancy_evaluator(judge_model):
    ev = RelevancyEvaluator(judge_model)
    req = EvaluationRequest(
        user_text="How tall is the Eiffel Tower?",
        data_list=[DOC],
        response_content="It is 330 metres tall.",
    )
    res = ev.evaluate(req)
    assert 0.0 <= res.score <= 1.0 and res.feedback
    prompt = ev.prompts_for(req)[0]
    assert "How tall is the Eiffel Tower?" in prompt and DOC in prompt and "330 metres tall." in prompt


@pytest.mark.parametrize(
    "template, missing",
    [
        ("{query} {response}", ("context",)),
        ("{context}", ("query", "response")),
        ("nothing here", ("query", "response", "context")),
    ],
)
def test_relevancy_template_must_name_its_placeholders(judge_model, template, missing):
    with pytest.raises(TemplateError) as info:
        RelevancyEvaluator(judge_model, prompt_template=template)
    assert info.value.missing == missing
    for name in missing:
        assert "{" + name + "}" in str(info.value)


def test_custom_relevancy_template_is_used(judge_model):
    ev = RelevancyEvaluator(judge_model, prompt_template="Q={query} R={response} C={context} Relevant?")
    prompt = ev.prompts_for(EvaluationRequest("q1", ["c1"], "r1"))[0]
    assert "Q=q1 R=r1 C=c1 Relevant?" in prompt


def test_fact_check_template_validation(judge_model):
    with pytest.raises(TemplateError, match=r"\{claim\}"):
        FactCheckingEvaluator(judge_model, prompt_template="Document: {document}")


def test_braces_in_documents_are_safe(judge_model):
    ev = FactCheckingEvaluator(judge_model)
    prompt = ev.prompts_for(EvaluationRequest(user_text="json {claim} {x}", response_content="c"))[0]
    assert "json {claim} {x}" in prompt


class _Doubler:
    def predict(self, scores):
        return scores * 0 + 0.99


def test_calibrator_is_applied(judge_model):
    req = EvaluationRequest(user_text=DOC, response_content="It is in Rome.")
    res = FactCheckingEvaluator(judge_model, calibrator=_Doubler()).evaluate(req)
    assert res.score == pytest.approx(0.99) and res.passed
    assert res.metadata["calibrated"] and res.metadata["raw_score"] != res.score
