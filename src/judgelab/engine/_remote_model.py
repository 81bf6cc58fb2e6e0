"""``RemoteJudgeModel``: the ``JudgeModel`` contract answered by a judge another server runs.

``probabilities(prompt, labels)`` and ``judge_many`` keep their meaning; each
prompt becomes one request (at most ``concurrency`` in flight), and the
answer's top logprobs, decision probabilities or reply text become the
``Judgment``. What differs between protocols is the protocol's class
(``judgelab.specs.RemoteProtocol``, the spec's ``remote.wire_protocol``): the
path, the request body, where the answer's labels and text are. How a
rendered prompt reaches the server:

- a protocol that ``renders_prompt`` (``openai-completions``): the text
  rendered here from the spec's prompt format (raw template, or a chat
  template the spec gives), exactly as in process, so the same weights
  answer the same tokens;
- chat protocols and ``decisions``: the ``(system, user)`` messages, which
  the server renders with its own chat template. ``render`` returns a
  ``ChatPrompt`` that carries them; a plain string is sent as one user
  message.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgelab.engine._labels import ResolvedLabels
from judgelab.engine._model import BackendJudgeModel, Judgment
from judgelab.engine._prompt import Prompt, render_prompt
from judgelab.engine._remote_labels import LabelReading, pool_top_logprobs, read_label_text
from judgelab.errors import LabelError, RemoteError
from judgelab.specs import Messages, ModelSpec, RemoteAnswer, RemoteCall

if TYPE_CHECKING:  # the backend brings httpx, imported only when a remote judge loads
    from judgelab.engine._remote_backend import RemoteBackend

__all__ = ["ChatPrompt", "RemoteJudgeModel", "RemoteJudgment"]


class ChatPrompt(Prompt):
    """A prompt for a chat server: readable text, plus the ``(role, content)`` messages sent."""

    messages: Messages

    def __new__(cls, messages: Messages) -> "ChatPrompt":
        parts: list[tuple[str, bool]] = []
        for i, (role, content) in enumerate(messages):
            parts += [(("\n\n" if i else "") + f"[{role}]\n", False), (content, True)]
        joined = Prompt.from_parts(parts)
        obj = super().__new__(cls, str(joined), joined.plain_spans)
        obj.messages = tuple(messages)
        return obj

    def __add__(self, other: object) -> "ChatPrompt":
        """Text added to a chat prompt goes at the end of its last message."""
        if not isinstance(other, str):
            return NotImplemented
        (role, content), rest = self.messages[-1], self.messages[:-1]
        return ChatPrompt(rest + ((role, content + str(other)),))


@dataclass(frozen=True)
class RemoteJudgment(Judgment):
    """A ``Judgment`` from a remote judge, with what the server could not show.

    ``mode`` is ``"logprobs"``, ``"decisions"`` or ``"text"`` (probabilities
    1 or 0: no threshold, calibration or ranking can be computed from them);
    ``outside_mass`` the next-token mass outside the top logprobs returned;
    ``missing`` the labels not among them.
    """

    mode: str = "logprobs"
    outside_mass: float | None = None
    missing: tuple[str, ...] = ()


class RemoteJudgeModel(BackendJudgeModel):
    """A judge served elsewhere, behind the ``JudgeModel`` contract (see ``load_model``)."""

    def __init__(self, backend: "RemoteBackend", spec: ModelSpec) -> None:
        super().__init__(backend, spec)
        self.remote = backend.remote
        self.protocol = backend.remote.wire_protocol
        self.client = backend.client
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RemoteJudgeModel(id={self.id!r}, url={self.remote.url!r}, protocol={self.remote.protocol!r})"

    @property
    def mode(self) -> str:
        """``logprobs``, ``decisions`` (probabilities from the server) or ``text`` (1 or 0 scores)."""
        return "decisions" if self.protocol.gives_probabilities else self.remote.mode

    def usage(self) -> dict[str, int]:
        """Requests sent (retries included), retries, failures, and the server's prompt and completion tokens."""
        return dict(self.client.counts)

    def render(self, user: str, *, system: str | None = None) -> Prompt:
        """The prompt for a user turn: rendered text (completions) or the chat messages (``ChatPrompt``)."""
        if self.protocol.renders_prompt:
            return render_prompt(self.spec.prompt, user, system=system, model_id=self.id)
        system = self.spec.prompt.system if system is None else system
        return ChatPrompt(((("system", system),) if system else ()) + (("user", user),))

    def resolve_labels(self, labels: Sequence[str]) -> ResolvedLabels:
        """The labels checked (two or more, distinct); ids are label indices, token counts estimates."""
        key = tuple(labels)
        if len(key) < 2:
            raise LabelError(f"A judge question needs at least two labels, got {list(key)}.", labels=key)
        if len({lab.strip().lower() for lab in key}) != len(key):
            raise LabelError(f"Labels {list(key)} are not distinct once case and spaces are ignored; their "
                             "probabilities could not be told apart.", labels=key)
        n = tuple(max(1, len(self.backend.tokenize(lab.strip(), add_bos=False))) for lab in key)
        return ResolvedLabels(key, tuple(range(len(key))), tuple(range(len(key))), n)

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
        """One request per prompt (``concurrency`` at a time); the first failure raises."""
        self.resolve_labels(labels)
        counts = [self.check_prompt(p, what="prompt" if len(prompts) == 1 else f"prompt #{i}")
                  for i, p in enumerate(prompts)]
        if len(prompts) <= 1:
            out = [self._judge_one(p, labels, n) for p, n in zip(prompts, counts)]
        else:
            futures = [self._executor().submit(self._judge_one, p, labels, n) for p, n in zip(prompts, counts)]
            out = [f.result() for f in futures]
        with self._lock:
            self.stats["judgments"] += len(out)
            self.stats["prompt_tokens"] += sum(j.prompt_tokens for j in out)
        return out

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.remote_concurrency, thread_name_prefix="judgelab-remote")
            return self._pool

    @property
    def remote_concurrency(self) -> int:
        """Requests in flight at most."""
        return self.client.config.concurrency

    def _messages(self, prompt: str) -> Messages:
        return prompt.messages if isinstance(prompt, ChatPrompt) else (("user", str(prompt)),)

    def _where(self) -> str:
        return f" ({self.remote.model} at {self.remote.url})"

    def _judge_one(self, prompt: str, labels: Sequence[str], estimate: int) -> Judgment:
        path, body = self.protocol.request(self.remote, RemoteCall.judgment(self.remote, prompt, self._messages(prompt),
                                                                             labels))
        answer = self.protocol.answer(self.remote, self.client.post(path, body), labels, self.client.url(path))
        self.client.add_usage(answer.prompt_tokens, answer.completion_tokens)
        reading = self._reading(answer, labels)
        best = max(reading.probabilities, key=reading.probabilities.__getitem__)
        return RemoteJudgment(
            label=best,
            probability=reading.probabilities[best],
            probabilities=reading.probabilities,
            prompt_tokens=int(answer.prompt_tokens) if answer.prompt_tokens is not None else estimate,
            logprobs={k: math.log(p) if p > 0 else -math.inf for k, p in reading.probabilities.items()},
            label_mass=reading.label_mass,
            mode=self.mode,
            outside_mass=reading.outside_mass,
            missing=reading.missing,
        )

    def _reading(self, answer: RemoteAnswer, labels: Sequence[str]) -> LabelReading:
        if answer.probabilities is not None:
            return LabelReading(dict(answer.probabilities))
        if self.remote.mode == "text":
            return read_label_text(answer.text, labels, where=self._where())
        return pool_top_logprobs(answer.top or (), labels, self.spec.label_variants, where=self._where())

    def complete(self, prompt: str, max_tokens: int = 256, stop: Sequence[str] = ()) -> str:
        """Free greedy text from the server (temperature 0), up to ``max_tokens`` or a stop string."""
        call = RemoteCall.free_text(prompt, self._messages(prompt), max_tokens, stop)
        path, body = self.protocol.request(self.remote, call)
        data = self.client.post(path, body)
        try:
            return self.protocol.reply_text(data)
        except (KeyError, IndexError, TypeError) as exc:
            raise RemoteError(f"The judge server at {self.client.url(path)} answered without text ({exc}).",
                              url=self.client.url(path), reason="bad_response") from exc

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
        self.backend.close()
