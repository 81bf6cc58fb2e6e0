"""The model as request handlers see it: judging through the queue, on behalf of one request.

``QueuedModel`` wraps the one loaded ``JudgeModel`` (one token cache, one
lock): rendering, tokenising, label resolution and the engine's context check
run in the caller's thread; every forward pass runs on the ``Batcher``'s
worker. Evaluators and typed questions written against ``JudgeModel`` use it
unchanged. A ``RequestTicket`` ties the judging of one HTTP request together:
its share of each turn, its prompt budget (``--max-request-prompts``), and
cancellation when the client goes away (``guarded``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Sequence
from concurrent.futures import Future
from typing import TypeVar

from fastapi import Request

from judgelab.engine import BackendJudgeModel, Judgment, ResolvedLabels
from judgelab.server._batching import Batcher, prompt_name
from judgelab.server._errors import APIError
from judgelab.specs import ModelSpec

__all__ = ["QueuedModel", "RequestTicket", "guarded"]

T = TypeVar("T")


class RequestTicket:
    """One HTTP request's claim on the worker.

    Parameters
    ----------
    max_prompts
        The most prompts the request may ask for in all (``None``: no limit).
    """

    def __init__(self, max_prompts: int | None = None) -> None:
        self.max_prompts = max_prompts
        self.prompts = 0
        self.cancelled = False
        self._futures: list[Future[list[Judgment]]] = []
        self._lock = threading.Lock()

    def reserve(self, n: int) -> None:
        """Count ``n`` more prompts; 413 past the limit, before any of them is queued."""
        with self._lock:
            if self.cancelled:
                raise APIError(499, "The client closed the request.", code="client_closed")
            self.prompts += n
            if self.max_prompts is not None and self.prompts > self.max_prompts:
                raise APIError(
                    413,
                    f"This request needs {self.prompts} prompts (document chunks x claims x questions); "
                    f"the limit is {self.max_prompts} per request (judgelab serve --max-request-prompts). "
                    "Send shorter documents or split the request.",
                    code="too_many_prompts",
                )

    def track(self, future: Future[list[Judgment]]) -> None:
        with self._lock:
            self._futures.append(future)
            if self.cancelled:
                future.cancel()

    def cancel(self) -> None:
        """Drop every prompt of this request not judged yet; refuse new ones."""
        with self._lock:
            self.cancelled = True
            futures = list(self._futures)
        for future in futures:
            future.cancel()


class QueuedModel:
    """A ``JudgeModel`` (the engine's protocol) whose judgments run on a ``Batcher``'s worker.

    Parameters
    ----------
    model
        The loaded model (the server owns it; ``close`` here does nothing).
    batcher
        The queue in front of it.
    ticket
        The request this view judges for; ``None`` for no request.
    """

    def __init__(self, model: BackendJudgeModel, batcher: Batcher, ticket: RequestTicket | None = None) -> None:
        self.model = model
        self.batcher = batcher
        self.ticket = ticket

    def for_request(self, ticket: RequestTicket) -> "QueuedModel":
        """The same model, judging on behalf of one request."""
        return QueuedModel(self.model, self.batcher, ticket)

    # -- facts and prompts: the wrapped model's own ---------------------------

    @property
    def id(self) -> str:
        return self.model.id

    @property
    def spec(self) -> ModelSpec:
        return self.model.spec

    @property
    def n_ctx(self) -> int:
        return self.model.n_ctx

    @property
    def stats(self) -> dict[str, int]:
        return self.model.stats

    def render(self, user: str, *, system: str | None = None) -> str:
        return self.model.render(user, system=system)

    def tokenize(self, text: str) -> list[int]:
        return self.model.tokenize(text)

    def count_tokens(self, text: str) -> int:
        return self.model.count_tokens(text)

    def resolve_labels(self, labels: Sequence[str]) -> ResolvedLabels:
        return self.model.resolve_labels(labels)

    def check_prompt(self, prompt: str, *, what: str = "prompt") -> int:
        return self.model.check_prompt(prompt, what=what)

    # -- judging: through the queue -------------------------------------------

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
        """Blocking; the engine's label and context checks fail here, before anything is queued."""
        if not prompts:
            return []
        judgments: list[Judgment] = self.submit(prompts, labels).result()
        return judgments

    def submit(self, prompts: Sequence[str], labels: Sequence[str]) -> Future[list[Judgment]]:
        """Check, count against the ticket, and queue ``prompts``; the future holds the judgments."""
        self.model.resolve_labels(labels)
        counts = [self.model.check_prompt(p, what=prompt_name(prompts, i)) for i, p in enumerate(prompts)]
        if self.ticket is not None:
            self.ticket.reserve(len(prompts))
        future = self.batcher.submit(prompts, labels, token_counts=counts, owner=self.ticket)
        if self.ticket is not None:
            self.ticket.track(future)
        return future

    def judge(self, prompt: str, labels: Sequence[str]) -> Judgment:
        return self.judge_many([prompt], labels)[0]

    def probabilities(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        return self.judge(prompt, labels).probabilities

    def batch_probabilities(self, prompts: Sequence[str], labels: Sequence[str]) -> list[dict[str, float]]:
        return [j.probabilities for j in self.judge_many(prompts, labels)]

    def complete(self, prompt: str, max_tokens: int = 256, stop: Sequence[str] = ()) -> str:
        text: str = self.batcher.call(lambda m: m.complete(prompt, max_tokens, stop)).result()
        return text

    def close(self) -> None:  # the server owns the real model's lifetime
        pass


async def guarded(request: Request, ticket: RequestTicket, work: Awaitable[T]) -> T:
    """``await work``, unless the client disconnects first: then drop its judging and answer 499.

    The body has been read by then, so the next ASGI message is the disconnect.
    """
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if task.done():
        return task.result()
    ticket.cancel()
    task.add_done_callback(_consume)  # the worker thread may still be chunking; let it finish alone
    raise APIError(499, "The client closed the request; its unjudged prompts were dropped.", code="client_closed")


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _consume(task: "asyncio.Future[T]") -> None:
    if not task.cancelled():
        task.exception()
