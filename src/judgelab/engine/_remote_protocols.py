"""What a remote judge sends and reads, per protocol.

Each protocol turns one prompt (text, or chat messages) and the label words
into a request ``(path, body)``, and reads the answer into a ``RemoteAnswer``:
the alternatives at the first generated position (token text, log
probability over the whole vocabulary), or the label probabilities directly
(``/v1/decisions``), the reply text, and the server's token counts.

==================== ============================ ==========================================
protocol             endpoint                     distribution from
==================== ============================ ==========================================
openai-chat          ``/chat/completions``        ``choices[0].logprobs.content[0].top_logprobs``
openai-completions   ``/completions``             ``choices[0].logprobs.top_logprobs[0]``
ollama-chat          ``/api/chat``                ``logprobs[0].top_logprobs``
decisions            ``/decisions``               ``answers[0]`` (predicate / choice)
==================== ============================ ==========================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from judgelab.errors import RemoteError
from judgelab.specs import RemoteSpec

__all__ = ["Messages", "RemoteAnswer", "build_request", "read_answer", "YES_NO"]

Messages = tuple[tuple[str, str], ...]
"""Chat messages as ``(role, content)`` pairs."""

YES_NO = ("yes", "no")


@dataclass(frozen=True)
class RemoteAnswer:
    """One server answer, before the labels are read from it.

    ``top`` holds ``(token text, logprob)`` alternatives at the first
    generated position (``None`` when the server sent no logprobs);
    ``probabilities`` the label probabilities a decisions server gave.
    """

    text: str = ""
    top: tuple[tuple[str, float], ...] | None = None
    probabilities: dict[str, float] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def _chat(messages: Messages) -> list[dict[str, str]]:
    return [{"role": role, "content": content} for role, content in messages]


def build_request(spec: RemoteSpec, prompt: str, messages: Messages, labels: Sequence[str],
                  *, max_tokens: int | None = None, stop: Sequence[str] = ()) -> tuple[str, dict[str, Any]]:
    """The ``(path, JSON body)`` that asks ``spec``'s server for one judgment (or free text with ``max_tokens``)."""
    logprobs = spec.mode == "logprobs" and max_tokens is None
    n = max_tokens or spec.max_tokens
    if spec.protocol == "openai-completions":
        body: dict[str, Any] = {"model": spec.model, "prompt": str(prompt), "max_tokens": n, "temperature": 0}
        if logprobs:
            body["logprobs"] = spec.top_logprobs
        return "completions", body | ({"stop": list(stop)} if stop else {})
    if spec.protocol == "openai-chat":
        body = {"model": spec.model, "messages": _chat(messages), "max_tokens": n, "temperature": 0}
        if logprobs:
            body.update(logprobs=True, top_logprobs=spec.top_logprobs)
        return "chat/completions", body | ({"stop": list(stop)} if stop else {})
    if spec.protocol == "ollama-chat":
        options: dict[str, Any] = {"temperature": 0, "num_predict": n}
        body = {"model": spec.model, "messages": _chat(messages), "stream": False, "options": options}
        if logprobs:
            body.update(logprobs=True, top_logprobs=spec.top_logprobs)
        return "api/chat", body | ({"options": options | {"stop": list(stop)}} if stop else {})
    if max_tokens is not None:
        raise RemoteError(f"The decisions protocol answers questions only; {spec.model} at {spec.url} cannot "
                          "write free text (use an openai-chat or ollama-chat spec for that).", url=spec.url,
                          reason="unsupported")
    return "decisions", _decision_body(spec, messages, labels)


def _decision_body(spec: RemoteSpec, messages: Messages, labels: Sequence[str]) -> dict[str, Any]:
    if tuple(lab.strip().lower() for lab in labels) == YES_NO:
        question: dict[str, Any] = {"type": "predicate", "instructions": spec.instructions}
    else:
        question = {"type": "choice", "instructions": spec.instructions,
                    "choices": [{"value": label} for label in labels]}
    return {"model": spec.model, "input": _chat(messages), "questions": [question]}


def read_answer(spec: RemoteSpec, data: Any, labels: Sequence[str], url: str) -> RemoteAnswer:
    """The ``RemoteAnswer`` in a server's JSON answer.

    Raises
    ------
    RemoteError
        When the answer lacks what the protocol promises (``bad_response``), a
        decisions server refused the question (``refused``), or logprobs were
        asked for and not given (``no_logprobs``).
    """
    try:
        answer = _READERS[spec.protocol](data, labels)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise RemoteError(f"The judge server at {url} answered in a shape the {spec.protocol} protocol does not "
                          f"have ({type(exc).__name__}: {exc}); is the protocol right?", url=url,
                          reason="bad_response") from exc
    if spec.mode == "logprobs" and spec.protocol != "decisions" and not answer.top:
        if answer.completion_tokens == 0 and not answer.text:
            raise RemoteError(f"The judge at {url} ended its reply before writing a token (its most likely first "
                              "token was end-of-turn), so the server returned no logprobs to read a label from.",
                              url=url, reason="no_label")
        raise RemoteError(f"The judge server at {url} ignored logprobs (its answer has none); use a server that "
                          "returns them (llama.cpp: --logits_all True; Ollama 0.12.11+) or text mode (mode = "
                          '"text", scheme openai+text / ollama+text).', url=url, reason="no_logprobs")
    return answer


def _completions(data: Any, labels: Sequence[str]) -> RemoteAnswer:
    choice = data["choices"][0]
    lp = choice.get("logprobs") or {}
    first = (lp.get("top_logprobs") or [None])[0] or {}
    usage = data.get("usage") or {}
    return RemoteAnswer(choice.get("text") or "", tuple((str(t), float(v)) for t, v in first.items()) or None,
                        None, usage.get("prompt_tokens"), usage.get("completion_tokens"))


def _entries(items: Any) -> tuple[tuple[str, float], ...] | None:
    return tuple((str(e["token"]), float(e["logprob"])) for e in items or ()) or None


def _openai_chat(data: Any, labels: Sequence[str]) -> RemoteAnswer:
    choice = data["choices"][0]
    content = (choice.get("logprobs") or {}).get("content") or [{}]
    usage = data.get("usage") or {}
    return RemoteAnswer((choice.get("message") or {}).get("content") or "", _entries(content[0].get("top_logprobs")),
                        None, usage.get("prompt_tokens"), usage.get("completion_tokens"))


def _ollama_chat(data: Any, labels: Sequence[str]) -> RemoteAnswer:
    first = (data.get("logprobs") or [{}])[0]
    return RemoteAnswer((data.get("message") or {}).get("content") or "", _entries(first.get("top_logprobs")),
                        None, data.get("prompt_eval_count"), data.get("eval_count"))


def _decisions(data: Any, labels: Sequence[str]) -> RemoteAnswer:
    answer = data["answers"][0]
    usage = data.get("usage") or {}
    tokens = (usage.get("input_tokens"), usage.get("output_tokens"))
    if answer["type"] == "refusal":
        raise RemoteError(f"The decisions server refused the question: {answer.get('reason', '')}", reason="refused")
    if answer["type"] == "predicate":
        p = float(answer["probability"])
        yes, no = labels
        return RemoteAnswer("", None, {yes: p, no: 1.0 - p}, *tokens)
    by_value = {str(e["value"]): float(e["probability"]) for e in answer["probabilities"]}
    return RemoteAnswer(str(answer.get("choice", "")), None, {lab: by_value[lab] for lab in labels}, *tokens)


_READERS = {
    "openai-completions": _completions,
    "openai-chat": _openai_chat,
    "ollama-chat": _ollama_chat,
    "decisions": _decisions,
}
