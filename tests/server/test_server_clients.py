"""The official clients (ollama, openai, typesafe-sdk) and Spring AI's exact request, against a real server."""

from __future__ import annotations

import math

import httpx
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODEL = "gemma-3-270m"
LABELS = {"Yes", "No"}
QUESTION = "Is Paris in France?"


# -- Ollama ----------------------------------------------------------------------


@pytest.fixture()
def ollama_client(base_url, api_key):
    import ollama

    return ollama.Client(host=base_url, headers={"Authorization": f"Bearer {api_key}"})


def test_ollama_chat_answers_one_label(ollama_client, http):
    reply = ollama_client.chat(
        model=MODEL, messages=[{"role": "user", "content": QUESTION}], options={"num_predict": 2, "temperature": 0}
    )
    assert reply.message.role == "assistant"
    assert reply.message.content in LABELS
    assert reply.done is True and reply.prompt_eval_count > 0
    # the same request over raw HTTP shows the extra field Ollama clients ignore
    raw = http.post("/api/chat", json={"model": MODEL, "messages": [{"role": "user", "content": QUESTION}],
                                       "stream": False}).json()
    assert raw["message"]["content"] == reply.message.content
    extra = raw["judgelab"]
    assert extra["label"] == reply.message.content
    assert extra["probability"] == pytest.approx(extra["probabilities"][extra["label"]])
    assert sum(extra["probabilities"].values()) == pytest.approx(1.0)


def test_ollama_chat_stream_and_generate(ollama_client):
    chunks = list(ollama_client.chat(model=MODEL, messages=[{"role": "user", "content": QUESTION}], stream=True))
    assert chunks[-1].done is True and not chunks[0].done
    streamed = "".join(c.message.content or "" for c in chunks)
    assert streamed in LABELS

    gen = ollama_client.generate(model=f"{MODEL}:latest", prompt=QUESTION, logprobs=True, top_logprobs=2)
    assert gen.response == streamed  # same prompt text, same model, same answer
    assert gen.logprobs[0].token == gen.response
    assert sum(math.exp(t.logprob) for t in gen.logprobs[0].top_logprobs) == pytest.approx(1.0, abs=1e-6)

    gen_chunks = list(ollama_client.generate(model=MODEL, prompt=QUESTION, stream=True))
    assert "".join(c.response or "" for c in gen_chunks) == gen.response


def test_ollama_tags_show_version(ollama_client, base_url, api_key):
    names = [m.model for m in ollama_client.list().models]
    assert f"{MODEL}:latest" in names and "bespoke-minicheck:latest" in names
    shown = ollama_client.show(MODEL)
    assert shown.modelinfo["general.name"] == MODEL
    assert "completion" in shown.capabilities
    version = httpx.get(f"{base_url}/api/version", headers={"Authorization": f"Bearer {api_key}"}).json()
    assert version["version"]


def test_spring_ai_fact_checking_request(http):
    """Exactly what Spring AI's OllamaChatModel sends for FactCheckingEvaluator.forBespokeMinicheck."""
    body = {
        "model": "bespoke-minicheck",
        "messages": [{
            "role": "user",
            "content": "Document: The Eiffel Tower is in Paris.\nClaim: The Eiffel Tower is in Paris.\n",
        }],
        "stream": False,
        "tools": [],
        "options": {"num_predict": 2, "temperature": 0.0},
    }
    response = http.post("/api/chat", json=body, headers={"Content-Type": "application/json", "Accept": "application/json"})
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["done"] is True
    reply = data["message"]["content"]
    assert reply.strip() == reply and reply in LABELS  # Spring's pass test: "yes".equalsIgnoreCase(reply)
    assert data["judgelab"]["ignored"] == ["options.temperature"]

    # newer Spring AI releases add format, keep_alive and think: accepted and ignored
    body.update({"format": "json", "keep_alive": "5m", "think": False})
    again = http.post("/api/chat", json=body).json()
    assert again["message"]["content"] == reply
    assert again["judgelab"]["ignored"] == ["format", "keep_alive", "options.temperature", "think"]


def test_labels_are_configurable_per_request(http):
    data = http.post("/api/chat", json={"model": MODEL, "stream": False, "labels": ["True", "False"],
                                        "messages": [{"role": "user", "content": "Paris is in France. True or False?"}]}).json()
    assert data["message"]["content"] in {"True", "False"}
    assert set(data["judgelab"]["probabilities"]) == {"True", "False"}


# -- OpenAI ----------------------------------------------------------------------


def test_openai_chat_completion_with_logprobs(openai_client):
    completion = openai_client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": QUESTION}],
        logprobs=True, top_logprobs=2, max_tokens=2, temperature=0.7,
    )
    choice = completion.choices[0]
    assert choice.message.content in LABELS and choice.finish_reason == "stop"
    token = choice.logprobs.content[0]
    assert token.token == choice.message.content
    top = {t.token: t.logprob for t in token.top_logprobs}
    assert set(top) == LABELS
    assert sum(math.exp(lp) for lp in top.values()) == pytest.approx(1.0, abs=1e-6)
    assert token.logprob == max(top.values())
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens == 1
    assert completion.model_extra["judgelab"]["ignored"] == ["temperature"]


def test_openai_stream_and_models(openai_client):
    stream = openai_client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": QUESTION}], stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text in LABELS
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 1
    ids = [m.id for m in openai_client.models.list()]
    assert MODEL in ids and "jev-latest" in ids


def test_openai_unknown_model_is_404(openai_client):
    import openai

    with pytest.raises(openai.NotFoundError, match="not found"):
        openai_client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hi"}])


# -- TypeSafe System One ----------------------------------------------------------


@pytest.fixture()
def typesafe_client(base_url, api_key):
    from typesafe_sdk import RetryPolicy, TypeSafeClient

    # No model given: the SDK sends its default "jev-latest", which the server answers to via --alias.
    with TypeSafeClient(api_key=api_key, base_url=base_url, retry=RetryPolicy(max_retries=0), timeout=120) as client:
        yield client


def test_typesafe_system_one_noul(typesafe_client):
    from typesafe_sdk import Noul

    result = typesafe_client.system_one(
        state={"message": "I was charged twice for my order. Please refund me."},
        questions={
            "billing": Noul(instructions="Is this message about billing?"),
            "spam": {"type": "noul", "criteria": {"true": "Unsolicited advertising", "false": "A real request"}},
        },
    )
    assert result.model == MODEL
    assert set(result.nouls) == {"billing", "spam"}
    for answer in result.nouls.values():
        assert 0.0 <= answer.noul <= 1.0
    assert result.usage.input_tokens > 0 and result.usage.output_tokens == 2
    assert result.request_id


def test_typesafe_choice_and_score(typesafe_client):
    from typesafe_sdk import Choice, Score

    result = typesafe_client.system_one(
        state="I was charged twice. Please help!",
        questions={
            "tone": Choice(instructions="What is the tone?", criteria={"calm": None, "angry": "Upset or hostile"}),
            "urgency": Score(instructions="How urgent is it?", criteria=["Can wait", "This week", "Today"]),
        },
    )
    tone = result.choices["tone"]
    assert tone.choice in {"calm", "angry"}
    assert sum(tone.probabilities.values()) == pytest.approx(1.0)
    assert tone.confidence == pytest.approx(max(tone.probabilities.values()))
    urgency = result.scores["urgency"]
    assert set(urgency.probabilities) == {0, 1, 2} and urgency.legend[2] == "Today"
    assert urgency.score == pytest.approx(sum(k * p for k, p in urgency.probabilities.items()))


def test_typesafe_models_and_errors(typesafe_client):
    from typesafe_sdk import Box, TypeSafeBadRequestError, TypeSafeNotFoundError

    names = [m.name for m in typesafe_client.models.list().models]
    assert MODEL in names
    with pytest.raises(TypeSafeBadRequestError, match="box question"):
        typesafe_client.system_one(state="hello", questions={"dog": Box(instructions="The dog")})
    with pytest.raises(TypeSafeNotFoundError, match="not found"):
        typesafe_client.system_one(state="hello", questions={"q": {"type": "noul", "instructions": "Hi?"}},
                                   model="jev-preview")
