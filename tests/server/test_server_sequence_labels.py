"""``judgelab serve --labels "GRADE: C,GRADE: I"``: labels that share their first tokens, over the wire.

The server answers with exactly one whole label, and its probability is the
labels' full-sequence likelihood normalised over the two, computed here
directly from the in-process model's full-vocabulary logits.
"""

from __future__ import annotations

import math

import httpx
import pytest

GRADES = ("GRADE: C", "GRADE: I")
QUESTION = (
    "Question: What is the capital of France?\nExpert answer: Paris\nSubmitted answer: {answer}\n"
    "Reply with GRADE: C if the submission is correct, GRADE: I if it is not."
)


@pytest.mark.parametrize("answer", ["Paris", "Lyon"])
def test_openai_chat_answers_one_grade_with_its_probability(grade_server, judge_model, label_likelihoods, answer):
    import openai

    client = openai.OpenAI(base_url=f"{grade_server.url}/v1", api_key="unused", max_retries=0)
    user = QUESTION.format(answer=answer)
    completion = client.chat.completions.create(
        model="gemma-3-270m", messages=[{"role": "user", "content": user}], logprobs=True, top_logprobs=2)
    text = completion.choices[0].message.content
    assert text in GRADES
    extra = completion.model_extra["judgelab"]
    direct = label_likelihoods(judge_model, judge_model.render(user), GRADES)
    assert extra["probabilities"] == pytest.approx(direct, abs=2e-3)
    assert text == max(direct, key=direct.get)
    top = {e.token: e.logprob for e in completion.choices[0].logprobs.content[0].top_logprobs}
    assert {k: math.exp(v) for k, v in top.items()} == pytest.approx(direct, abs=2e-3)
    assert completion.usage.completion_tokens == len(judge_model.backend.tokenize(text, add_bos=False))


def test_ollama_chat_and_generate_write_one_whole_grade(grade_server):
    import ollama

    client = ollama.Client(host=grade_server.url)
    user = QUESTION.format(answer="Paris")
    chat = client.chat(model="gemma-3-270m", messages=[{"role": "user", "content": user}])
    assert chat.message.content in GRADES
    generated = client.generate(model="gemma-3-270m", prompt=user)
    assert generated.response in GRADES


def test_too_few_tokens_for_a_grade_is_a_400(grade_server):
    body = {"model": "gemma-3-270m", "max_tokens": 2,
            "messages": [{"role": "user", "content": QUESTION.format(answer="Paris")}]}
    reply = httpx.post(f"{grade_server.url}/v1/chat/completions", json=body, timeout=120)
    assert reply.status_code == 400
    assert "takes 3 tokens" in reply.json()["error"]["message"]


def test_labels_that_cannot_be_told_apart_are_a_400_on_labels(grade_server):
    body = {"model": "gemma-3-270m", "labels": ["Score: 1", "Score: 10"],
            "messages": [{"role": "user", "content": "Rate it."}]}
    reply = httpx.post(f"{grade_server.url}/v1/chat/completions", json=body, timeout=120)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["param"] == "labels" and "cannot be told apart" in error["message"]
