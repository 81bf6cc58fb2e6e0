"""``POST /v1/decisions`` with the official openai client (sync and async), langchain-openai,
raw HTTP errors, the ``decision`` capability, and Spring AI 2.1's decision-model requests."""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODEL = "gemma-3-270m"
INPUT = "I was charged twice for my subscription this month. Please refund one of the charges today!"
QUESTIONS = [
    {"type": "predicate", "name": "refund", "instructions": "The customer asks for a refund."},
    {
        "type": "choice",
        "name": "team",
        "instructions": "Which team should handle this message?",
        "choices": [
            {"value": "billing", "description": "Payments, charges, refunds"},
            {"value": "technical", "description": "Bugs and outages"},
            {"value": "sales"},
        ],
    },
    {
        "type": "score",
        "name": "urgency",
        "instructions": "How urgent is the message?",
        "levels": [{"label": "low"}, {"label": "medium", "description": "This week"}, {"label": "high", "description": "Today"}],
    },
]


def _typed_questions():
    """What the endpoint asks for QUESTIONS (the mapping the module docstring states)."""
    from judgelab.questions import Choice, Noul, Score

    return [
        Noul(instructions="The customer asks for a refund."),
        Choice(
            instructions="Which team should handle this message?",
            options={"billing": "Payments, charges, refunds", "technical": "Bugs and outages", "sales": ""},
        ),
        Score(instructions="How urgent is the message?", levels=["low", "medium: This week", "high: Today"]),
    ]


def _check_distributions(decision) -> None:
    for answer in decision.answers:
        if answer.type == "predicate":
            assert 0.0 <= answer.probability <= 1.0
        else:
            assert sum(p.probability for p in answer.probabilities) == pytest.approx(1.0, abs=1e-6)
            assert answer.confidence == pytest.approx(max(p.probability for p in answer.probabilities))


@pytest.fixture()
def decisions_client(openai_client):
    """The shared ``openai_client``; skips where this openai has no decisions resource."""
    import openai

    if not hasattr(openai.OpenAI, "decisions"):
        pytest.skip(f"openai {openai.__version__} has no decisions resource (pip install 'openai>=3.57')")
    return openai_client


# -- the official client ------------------------------------------------------------


def test_openai_client_predicate_choice_score(decisions_client):
    decision = decisions_client.decisions.create(model=MODEL, input=INPUT, questions=QUESTIONS)
    assert decision.model == MODEL
    assert [a.type for a in decision.answers] == ["predicate", "choice", "score"]
    assert [a.name for a in decision.answers] == ["refund", "team", "urgency"]
    refund, team, urgency = decision.answers
    assert [p.value for p in team.probabilities] == ["billing", "technical", "sales"]
    assert team.choice == max(team.probabilities, key=lambda p: p.probability).value
    assert [(p.value, p.label) for p in urgency.probabilities] == [(0, "low"), (1, "medium"), (2, "high")]
    assert urgency.score == pytest.approx(sum(p.value * p.probability for p in urgency.probabilities))
    _check_distributions(decision)
    usage = decision.usage
    assert usage.input_tokens > 0 and usage.output_tokens == 3
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0 and usage.output_tokens_details.reasoning_tokens == 0


def test_answers_equal_ask_all(decisions_client, judge_model):
    from judgelab.questions import ask_all

    decision = decisions_client.decisions.create(model=MODEL, input=INPUT, questions=QUESTIONS)
    expected = ask_all(judge_model, [({"input": INPUT}, t) for t in _typed_questions()])
    refund, team, urgency = decision.answers
    assert refund.probability == pytest.approx(expected[0].probability, abs=1e-6)
    assert {p.value: p.probability for p in team.probabilities} == pytest.approx(dict(expected[1].probabilities), abs=1e-6)
    assert team.choice == expected[1].choice and team.confidence == pytest.approx(expected[1].confidence, abs=1e-6)
    assert [p.probability for p in urgency.probabilities] == pytest.approx(list(expected[2].probabilities), abs=1e-6)
    assert urgency.score == pytest.approx(expected[2].expected, abs=1e-6)
    assert decision.usage.input_tokens == sum(a.prompt_tokens for a in expected)


def test_message_input_and_unnamed_questions_equal_ask_all(decisions_client, judge_model):
    from judgelab.questions import Noul, ask_all

    messages = [
        {"role": "developer", "content": "You review support conversations."},
        {"role": "user", "content": [{"type": "input_text", "text": "My card was charged twice."}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "I have refunded one charge."}]},
    ]
    decision = decisions_client.decisions.create(
        model=MODEL, input=messages,
        questions=[{"type": "predicate", "instructions": "The assistant resolved the problem."},
                   {"type": "predicate", "instructions": [{"type": "input_text", "text": "The user is angry."}]}],
    )
    assert [a.name for a in decision.answers] == [None, None]
    state = {"input": "User: My card was charged twice.\n\nAssistant: I have refunded one charge."}
    expected = ask_all(judge_model, [(state, Noul(instructions="The assistant resolved the problem.")),
                                     (state, Noul(instructions="The user is angry."))],
                       system="You review support conversations.")
    assert [a.probability for a in decision.answers] == pytest.approx([e.probability for e in expected], abs=1e-6)


def test_boolean_choice_values_stay_typed(decisions_client):
    decision = decisions_client.decisions.create(
        model="gpt-6-luna",  # the clients' default model name is answered by the served model
        input="The sky is green.",
        questions=[{"type": "choice", "instructions": "Is the statement true?",
                    "choices": [{"value": True}, {"value": False}, {"value": "unsure", "description": "Cannot tell"}]}],
    )
    (answer,) = decision.answers
    assert decision.model == MODEL
    assert [p.value for p in answer.probabilities] == [True, False, "unsure"]
    assert type(answer.probabilities[0].value) is bool and answer.choice in (True, False, "unsure")
    _check_distributions(decision)


def test_async_client(base_url, api_key):
    import openai

    if not hasattr(openai.AsyncOpenAI, "decisions"):
        pytest.skip(f"openai {openai.__version__} has no decisions resource (pip install 'openai>=3.57')")

    async def run():
        client = openai.AsyncOpenAI(base_url=f"{base_url}/v1", api_key=api_key, max_retries=0)
        try:
            return await asyncio.gather(*[client.decisions.create(model=MODEL, input=INPUT, questions=QUESTIONS)
                                          for _ in range(2)])
        finally:
            await client.close()

    first, second = asyncio.run(run())
    for decision in (first, second):
        assert [a.type for a in decision.answers] == ["predicate", "choice", "score"]
        _check_distributions(decision)
    assert first.answers[0].probability == pytest.approx(second.answers[0].probability, abs=1e-6)


# -- errors: API-shaped 4xx, and the server keeps serving ------------------------------


def _many(n):
    return [{"type": "predicate", "instructions": f"Claim {i} holds."} for i in range(n)]


def _levels(n):
    return [{"label": f"level {i}"} for i in range(n)]


BAD_REQUESTS = {
    "no questions": ({"questions": []}, "questions", "questions is empty"),
    "401 questions": ({"questions": _many(401)}, "questions", "at most 400"),
    "27 choices": ({"questions": [{"type": "choice", "instructions": "Pick one.",
                                   "choices": [{"value": f"c{i}"} for i in range(27)]}]},
                   "questions.0.choices", "at most 26"),
    "1 choice": ({"questions": [{"type": "choice", "instructions": "Pick.", "choices": [{"value": "a"}]}]},
                 "questions.0.choices", "at least 2"),
    "score with 1 level": ({"questions": [{"type": "score", "instructions": "Rate.", "levels": _levels(1)}]},
                           "questions.0.levels", "2 to 10"),
    "score with 11 levels": ({"questions": [{"type": "score", "instructions": "Rate.", "levels": _levels(11)}]},
                             "questions.0.levels", "2 to 10"),
    "duplicate names": ({"questions": [{"type": "predicate", "name": "a", "instructions": "X."},
                                       {"type": "predicate", "name": "a", "instructions": "Y."}]},
                        "questions.1.name", "must be unique"),
    "duplicate choices": ({"questions": [{"type": "choice", "instructions": "Pick.",
                                          "choices": [{"value": True}, {"value": "TRUE"}]}]},
                          "questions.0.choices.1.value", "repeats"),
    "instructions not text": ({"questions": [{"type": "predicate", "instructions": 5}]},
                              "questions.0.instructions", "Invalid request body"),
    "unknown question type": ({"questions": [{"type": "box", "instructions": "The dog."}]},
                              "questions.0", "Invalid request body"),
    "input not text": ({"input": 42}, "input", "Invalid request body"),
    "image part": ({"input": [{"role": "user", "content": [
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}]},
        "input.0.content.0", "the judge reads text only"),
    "image in instructions": ({"questions": [{"type": "predicate", "instructions": [
        {"type": "input_image", "image_url": "https://example.invalid/x.png"}]}]},
        "questions.0.instructions.0", "the judge reads text only"),
    "model missing": ({"model": None}, "model", "Invalid request body"),
    # the question models are declared once (judgelab.wire.DecisionQuestion): MCP's decide refuses these too
    "empty instructions": ({"questions": [{"type": "predicate", "instructions": " "}]},
                           "questions.0.instructions", "is empty"),
    "choice value not text or boolean": ({"questions": [{"type": "choice", "instructions": "Pick.",
                                                         "choices": [{"value": 1}, {"value": 0}]}]},
                                         "questions.0.choices.0.value", "Invalid request body"),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_bad_requests_get_api_errors_and_the_server_keeps_serving(http, case):
    change, param, message = BAD_REQUESTS[case]
    body = {"model": MODEL, "input": INPUT, "questions": QUESTIONS[:1], **change}
    body = {k: v for k, v in body.items() if v is not None}
    response = http.post("/v1/decisions", json=body)
    assert 400 <= response.status_code < 500, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert message in error["message"]
    ok = http.post("/v1/decisions", json={"model": MODEL, "input": INPUT, "questions": QUESTIONS[:1]})
    assert ok.status_code == 200 and ok.json()["answers"][0]["type"] == "predicate"


def test_input_longer_than_context_says_how_long(http, judge_model, decisions_client):
    import openai

    text = "lorem ipsum " * judge_model.n_ctx
    response = http.post("/v1/decisions", json={"model": MODEL, "input": text, "questions": QUESTIONS})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "input" and error["code"] == "context_length_exceeded"
    assert f"context holds: {judge_model.n_ctx}" in error["message"]
    n_tokens = int(error["message"].split("prompt tokens: ")[1].split(",")[0])
    assert n_tokens > judge_model.n_ctx
    with pytest.raises(openai.BadRequestError, match="context holds"):
        decisions_client.decisions.create(model=MODEL, input=text, questions=QUESTIONS[:1])
    assert decisions_client.decisions.create(model=MODEL, input=INPUT, questions=QUESTIONS).answers[2].type == "score"


def test_unknown_model_is_404(decisions_client):
    import openai

    with pytest.raises(openai.NotFoundError, match="not found"):
        decisions_client.decisions.create(model="gpt-4o", input=INPUT, questions=QUESTIONS[:1])


# -- capabilities ------------------------------------------------------------------------


def test_show_and_tags_list_decision(http, base_url, api_key):
    import ollama

    client = ollama.Client(host=base_url, headers={"Authorization": f"Bearer {api_key}"})
    assert {"completion", "decision"} <= set(client.show(MODEL).capabilities)
    tags = http.get("/api/tags").json()["models"]
    assert all({"completion", "decision"} <= set(m["capabilities"]) for m in tags)


# -- Spring AI 2.1 -------------------------------------------------------------------------
# Replays of the HTTP requests Spring AI 2.1's decision models send (reference pages
# "Decision Models", "Ollama Decision Models", "OpenAI Decision Models"): OllamaDecisionModel
# checks at startup that /api/show lists the `decision` capability, then asks through the
# TypeSafe Java SDK's /v1/systemone; OpenAiDecisionModel posts to /v1/decisions through the
# official OpenAI Java SDK, whose body is the one the Python SDK sends.

SPRING_QUESTIONS = {
    "urgent": {"type": "noul", "instructions": "Does this message need attention today?"},
    "team": {"type": "choice", "instructions": "Which team should handle this ticket?",
             "criteria": {"billing": "Payments, payouts, invoices, refunds", "support": "Problems using the product",
                          "sales": "Pricing, upgrades, new accounts"}},
    "frustration": {"type": "score", "instructions": "How frustrated is the customer?",
                    "criteria": ["Calm", "Concerned", "Angry"]},
}
SPRING_INPUT = "Help! My payouts have been failing for 3 days and nobody answers my emails."


def test_spring_ai_ollama_decision_model_startup_check_and_call(http):
    shown = http.post("/api/show", json={"model": MODEL})
    assert shown.status_code == 200 and "decision" in shown.json()["capabilities"]
    response = http.post("/v1/systemone", json={"model": MODEL, "state": SPRING_INPUT, "questions": SPRING_QUESTIONS},
                         headers={"Content-Type": "application/json", "Accept": "application/json"})
    assert response.status_code == 200, response.text
    answers = response.json()["answers"]
    assert list(answers) == ["urgent", "team", "frustration"]
    assert 0.0 <= answers["urgent"]["noul"] <= 1.0
    assert answers["team"]["choice"] in SPRING_QUESTIONS["team"]["criteria"]
    assert sum(answers["team"]["probabilities"].values()) == pytest.approx(1.0, abs=1e-6)
    assert sum(answers["frustration"]["probabilities"].values()) == pytest.approx(1.0, abs=1e-6)


def test_spring_ai_openai_decision_model_request(http):
    body = {
        "model": "gpt-6-luna",  # OpenAiDecisionModel's default; spring.ai.openai.decision.options.model overrides it
        "input": SPRING_INPUT,
        "questions": [
            {"type": "predicate", "name": "urgent", "instructions": "Does this message need attention today?"},
            {"type": "choice", "name": "team", "instructions": "Which team should handle this ticket?",
             "choices": [{"value": "billing", "description": "Payments, payouts, invoices, refunds"},
                         {"value": "support", "description": "Problems using the product"},
                         {"value": "sales", "description": "Pricing, upgrades, new accounts"}]},
            {"type": "score", "name": "frustration", "instructions": "How frustrated is the customer?",
             "levels": [{"label": "Calm"}, {"label": "Concerned"}, {"label": "Angry"}]},
        ],
    }
    response = http.post("/v1/decisions", json=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    data = response.json()
    assert [(a["type"], a["name"]) for a in data["answers"]] == [
        ("predicate", "urgent"), ("choice", "team"), ("score", "frustration")]
    for answer in data["answers"][1:]:
        assert sum(p["probability"] for p in answer["probabilities"]) == pytest.approx(1.0, abs=1e-6)
    assert data["usage"]["total_tokens"] == data["usage"]["input_tokens"] + data["usage"]["output_tokens"]


# -- langchain-openai ----------------------------------------------------------------------


def test_langchain_openai_decisions(base_url, api_key):
    try:
        from langchain_openai.decisions import Choice, OpenAIDecisions, Predicate, Score
    except ImportError as exc:
        pytest.skip(f"langchain_openai.decisions.OpenAIDecisions is not importable ({exc}); "
                    "pip install 'langchain-openai>=1.7.4' (the first release with it)")
    decisions = OpenAIDecisions(model=MODEL, base_url=f"{base_url}/v1", api_key=api_key, max_retries=0)
    response = decisions.invoke({
        "input": INPUT,
        "questions": {
            "refund": Predicate(instructions="The customer asks for a refund."),
            "team": Choice(instructions="Which team should handle this message?",
                           choices={"billing": "Payments, charges, refunds", "technical": "Bugs and outages"}),
            "urgency": Score(instructions="How urgent is the message?", levels=["low", "medium", "high"]),
        },
    })
    assert 0.0 <= response.predicates["refund"].probability <= 1.0
    assert response.choices["team"].choice in {"billing", "technical"}
    assert 0.0 <= response.scores["urgency"].score <= 2.0
    assert not response.refusals


# -- refusals and the context check, above the engine (scripted model) ----------------------


def test_unreadable_question_is_refused_and_the_others_answered(scripted_model):

    from judgelab.errors import LabelError
    from judgelab.server._decisions import DecisionBody, answer_decisions

    class Unreadable(scripted_model):
        def judge_many(self, prompts, labels):
            if any("cannot be read" in p for p in prompts):
                raise LabelError("labels 'Yes'/'No' share their first token", labels=tuple(labels))
            return super().judge_many(prompts, labels)

    body = DecisionBody.model_validate({"model": MODEL, "input": INPUT, "questions": [
        {"type": "predicate", "name": "refund", "instructions": "The customer asks for a refund."},
        {"type": "predicate", "instructions": "This one cannot be read."},
    ]})
    answers, tokens = answer_decisions(Unreadable({"refund": 0.75}), body)
    assert answers[0] == {"type": "predicate", "name": "refund", "probability": 0.75}
    assert answers[1]["type"] == "refusal" and answers[1]["name"] is None and "share" in answers[1]["reason"]
    assert tokens > 0

    from openai.types import Decision  # the client parses a refusal among answers

    parsed = Decision.model_validate({"model": MODEL, "answers": answers, "usage": {
        "input_tokens": tokens, "input_tokens_details": {"cache_write_tokens": 0, "cached_tokens": 0},
        "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens + 1}})
    assert [a.type for a in parsed.answers] == ["predicate", "refusal"]


def test_too_long_input_is_a_400_on_input(scripted_model):

    from judgelab.server import APIError
    from judgelab.server._decisions import DecisionBody, answer_decisions

    body = DecisionBody.model_validate({"model": MODEL, "input": "a very long input", "questions": QUESTIONS[:1]})
    with pytest.raises(APIError) as caught:
        answer_decisions(scripted_model({"refund": 0.5}, too_long="very long"), body)
    assert caught.value.status == 400 and caught.value.param == "input"
    assert "99999" in caught.value.message and "10000" in caught.value.message


def test_input_items_become_one_text_state():
    from judgelab.server._decisions import DecisionBody, input_state

    body = DecisionBody.model_validate({"model": MODEL, "questions": QUESTIONS[:1], "input": [
        {"role": "system", "content": "Judge the agent."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Refund order 7."},
                                                        {"type": "input_json", "data": {"order": 7}}]},
        {"type": "function_call", "call_id": "c1", "name": "refund", "arguments": "{\"order\": 7}"},
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "done"}]},
        {"role": "assistant", "content": "Refunded."},
    ]})
    state, system = input_state(body.input)
    assert system == "Judge the agent."
    assert state == {"input": "User: Refund order 7.\n{\n  \"order\": 7\n}\n\nTool call: refund (c1): {\"order\": 7}"
                              "\n\nTool output: (c1): done\n\nAssistant: Refunded."}
    assert input_state("plain text") == ({"input": "plain text"}, None)
