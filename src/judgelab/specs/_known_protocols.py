"""The remote protocols judgelab ships: what each sends and where it reads the label distribution.

==================== ========= ============================ ==========================================
protocol             scheme    endpoint                     distribution from
==================== ========= ============================ ==========================================
openai-chat          openai    ``/chat/completions``        ``choices[0].logprobs.content[0].top_logprobs``
openai-completions   (same)    ``/completions``             ``choices[0].logprobs.top_logprobs[0]``
ollama-chat          ollama    ``/api/chat``                ``logprobs[0].top_logprobs``
decisions            (same)    ``/decisions``               ``answers[0]`` (predicate / choice)
==================== ========= ============================ ==========================================

``openai+text`` and ``ollama+text`` read the reply's label word instead of logprobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgelab.errors import RemoteError
from judgelab.specs._remote_protocol import JsonObject, Messages, RemoteAnswer, RemoteCall, RemoteProtocol, RemoteSettings, register_remote_protocol

__all__ = ["Decisions", "OllamaChat", "OpenAIChat", "OpenAICompletions", "YES_NO"]

YES_NO = ("yes", "no")
"""Labels a decisions server is asked as a predicate (case and spaces ignored); others are a choice."""


def _chat(messages: Messages) -> list[dict[str, str]]:
    return [{"role": role, "content": content} for role, content in messages]


def _entries(items: Any) -> tuple[tuple[str, float], ...] | None:
    return tuple((str(e["token"]), float(e["logprob"])) for e in items or ()) or None


@register_remote_protocol
class OpenAIChat(RemoteProtocol):
    """OpenAI's ``/chat/completions`` with ``logprobs`` and ``top_logprobs``; the server applies its chat template."""

    name = "openai-chat"
    path = "chat/completions"
    scheme = "openai"
    text_scheme = True
    api_key_env = "OPENAI_API_KEY"

    def body(self, spec: RemoteSettings, call: RemoteCall) -> JsonObject:
        body: JsonObject = {"model": spec.model, "messages": _chat(call.messages), "max_tokens": call.max_tokens,
                            "temperature": 0}
        if call.logprobs:
            body.update(logprobs=True, top_logprobs=spec.top_logprobs)
        return body | ({"stop": list(call.stop)} if call.stop else {})

    def read(self, data: Any, labels: Sequence[str]) -> RemoteAnswer:
        choice = data["choices"][0]
        content = (choice.get("logprobs") or {}).get("content") or [{}]
        usage = data.get("usage") or {}
        return RemoteAnswer((choice.get("message") or {}).get("content") or "",
                            _entries(content[0].get("top_logprobs")), None, usage.get("prompt_tokens"),
                            usage.get("completion_tokens"))

    def reply_text(self, data: Any) -> str:
        return str(data["choices"][0]["message"]["content"])


@register_remote_protocol
class OpenAICompletions(RemoteProtocol):
    """OpenAI's ``/completions`` with ``logprobs``: the prompt is rendered here, as in process (raw templates)."""

    name = "openai-completions"
    path = "completions"
    scheme = "openai-completions"
    api_key_env = "OPENAI_API_KEY"
    renders_prompt = True

    def body(self, spec: RemoteSettings, call: RemoteCall) -> JsonObject:
        body: JsonObject = {"model": spec.model, "prompt": str(call.prompt), "max_tokens": call.max_tokens,
                            "temperature": 0}
        if call.logprobs:
            body["logprobs"] = spec.top_logprobs
        return body | ({"stop": list(call.stop)} if call.stop else {})

    def read(self, data: Any, labels: Sequence[str]) -> RemoteAnswer:
        choice = data["choices"][0]
        lp = choice.get("logprobs") or {}
        first = (lp.get("top_logprobs") or [None])[0] or {}
        usage = data.get("usage") or {}
        return RemoteAnswer(choice.get("text") or "", tuple((str(t), float(v)) for t, v in first.items()) or None,
                            None, usage.get("prompt_tokens"), usage.get("completion_tokens"))

    def reply_text(self, data: Any) -> str:
        return str(data["choices"][0]["text"])


@register_remote_protocol
class OllamaChat(RemoteProtocol):
    """Ollama's ``/api/chat`` with ``logprobs`` (Ollama 0.12.11 and later); models listed at ``/api/tags``."""

    name = "ollama-chat"
    path = "api/chat"
    scheme = "ollama"
    text_scheme = True
    models_path = "api/tags"

    def body(self, spec: RemoteSettings, call: RemoteCall) -> JsonObject:
        options: JsonObject = {"temperature": 0, "num_predict": call.max_tokens}
        body: JsonObject = {"model": spec.model, "messages": _chat(call.messages), "stream": False, "options": options}
        if call.logprobs:
            body.update(logprobs=True, top_logprobs=spec.top_logprobs)
        return body | ({"options": options | {"stop": list(call.stop)}} if call.stop else {})

    def read(self, data: Any, labels: Sequence[str]) -> RemoteAnswer:
        first = (data.get("logprobs") or [{}])[0]
        return RemoteAnswer((data.get("message") or {}).get("content") or "", _entries(first.get("top_logprobs")),
                            None, data.get("prompt_eval_count"), data.get("eval_count"))

    def reply_text(self, data: Any) -> str:
        return str(data["message"]["content"])

    def listed_models(self, data: Any) -> list[str]:
        return [m.get("name", "") for m in data.get("models", [])]

    def served_names(self, model: str) -> set[str]:
        return {model, model + ":latest"}


@register_remote_protocol
class Decisions(RemoteProtocol):
    """``/decisions`` (vLLM, SGLang, judgelab serve): the label probabilities directly; questions only."""

    name = "decisions"
    path = "decisions"
    scheme = "decisions"
    api_key_env = "OPENAI_API_KEY"
    gives_probabilities = True
    writes_text = False

    def body(self, spec: RemoteSettings, call: RemoteCall) -> JsonObject:
        question: JsonObject
        if tuple(lab.strip().lower() for lab in call.labels) == YES_NO:
            question = {"type": "predicate", "instructions": spec.instructions}
        else:
            question = {"type": "choice", "instructions": spec.instructions,
                        "choices": [{"value": label} for label in call.labels]}
        return {"model": spec.model, "input": _chat(call.messages), "questions": [question]}

    def read(self, data: Any, labels: Sequence[str]) -> RemoteAnswer:
        answer = data["answers"][0]
        usage = data.get("usage") or {}
        tokens = (usage.get("input_tokens"), usage.get("output_tokens"))
        if answer["type"] == "refusal":
            raise RemoteError(f"The decisions server refused the question: {answer.get('reason', '')}",
                              reason="refused")
        if answer["type"] == "predicate":
            p = float(answer["probability"])
            yes, no = labels
            return RemoteAnswer("", None, {yes: p, no: 1.0 - p}, *tokens)
        by_value = {str(e["value"]): float(e["probability"]) for e in answer["probabilities"]}
        return RemoteAnswer(str(answer.get("choice", "")), None, {lab: by_value[lab] for lab in labels}, *tokens)
