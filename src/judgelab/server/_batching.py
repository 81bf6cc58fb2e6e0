"""One worker thread owns the model; requests reach it through a queue.

Concurrent judgment requests are micro-batched: the worker takes the first
job, waits ``window`` seconds for more, and runs every job with the same labels
as one ``judge_many`` call, so the engine computes shared prefixes once. A job
is run exactly once; a prompt that does not fit the context fails its own job
only. ``QueuedModel`` is a ``JudgeModel`` whose judging goes through the queue,
so evaluators and typed questions written against ``JudgeModel`` are batched
without knowing it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from judgelab.engine import JudgeModel, Judgment
from judgelab.errors import ContextLengthError

__all__ = ["Batcher", "QueuedModel", "BatcherClosedError"]

log = logging.getLogger(__name__)


class BatcherClosedError(RuntimeError):
    """The server is shutting down and takes no new work."""


@dataclass
class _Job:
    future: Future
    prompts: Sequence[str] = ()
    labels: tuple[str, ...] = ()
    call: Callable[[JudgeModel], Any] | None = None
    token_counts: list[int] = field(default_factory=list)


_STOP = object()


class Batcher:
    """The queue in front of one model and the worker thread that drains it.

    Parameters
    ----------
    model
        The loaded model; only the worker thread judges with it.
    window
        Seconds to wait for more jobs after the first one arrives.
    max_prompts
        The most prompts one ``judge_many`` call gets.
    on_batch
        Called after each batch with ``(n_jobs, n_prompts, prompt_tokens)``.
    """

    def __init__(
        self,
        model: JudgeModel,
        *,
        window: float = 0.005,
        max_prompts: int = 64,
        on_batch: Callable[[int, int, int], None] | None = None,
    ) -> None:
        self.model = model
        self.window = window
        self.max_prompts = max_prompts
        self.on_batch = on_batch
        self._queue: queue.Queue = queue.Queue()
        self._closed = False
        self._close_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="judgelab-model-worker", daemon=True)
        self._thread.start()

    # -- submitting ----------------------------------------------------------

    def submit(self, prompts: Sequence[str], labels: Sequence[str]) -> Future:
        """Judge ``prompts`` over ``labels``; the future holds ``list[Judgment]``."""
        return self._put(_Job(Future(), prompts=list(prompts), labels=tuple(labels)))

    def call(self, fn: Callable[[JudgeModel], Any]) -> Future:
        """Run ``fn(model)`` on the worker, alone (for free-text ``complete``)."""
        return self._put(_Job(Future(), call=fn))

    def _put(self, job: _Job) -> Future:
        with self._close_lock:
            if self._closed:
                raise BatcherClosedError("The judge is shutting down and takes no new requests.")
            self._queue.put(job)
        return job.future

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    def close(self, timeout: float | None = None) -> None:
        """Take no new jobs, finish every queued one, stop the worker."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
        self._thread.join(timeout)

    # -- the worker ----------------------------------------------------------

    def _run(self) -> None:
        stopping = False
        while not stopping:
            first = self._queue.get()
            if first is _STOP:
                break
            batch = [first]
            n_prompts = len(first.prompts)
            deadline = time.monotonic() + self.window
            while n_prompts < self.max_prompts:
                remaining = deadline - time.monotonic()
                try:
                    job = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if job is _STOP:
                    stopping = True  # finish this batch (and nothing is queued behind STOP)
                    break
                batch.append(job)
                n_prompts += len(job.prompts)
            try:
                self._process(batch)
            except Exception:  # pragma: no cover - a bug; never let the worker die
                log.exception("judge worker failed on a batch")
                for job in batch:
                    if not job.future.done():
                        job.future.set_exception(RuntimeError("internal error in the judge worker"))

    def _process(self, batch: list[_Job]) -> None:
        groups: dict[tuple[str, ...], list[_Job]] = {}
        for job in batch:
            if not job.future.set_running_or_notify_cancel():
                continue  # cancelled before it ran (client went away)
            if job.call is not None:
                self._run_call(job)
                continue
            try:
                job.token_counts = [len(self.model.tokenize(p)) for p in job.prompts]
                for i, n in enumerate(job.token_counts):
                    if n > self.model.n_ctx:
                        what = "prompt" if len(job.prompts) == 1 else f"prompt #{i}"
                        raise ContextLengthError(n, self.model.n_ctx, what=what)
            except Exception as exc:
                job.future.set_exception(exc)
                continue
            groups.setdefault(job.labels, []).append(job)
        for labels, jobs in groups.items():
            prompts = [p for job in jobs for p in job.prompts]
            try:
                judgments = self.model.judge_many(prompts, labels) if prompts else []
            except Exception as exc:
                for job in jobs:
                    job.future.set_exception(exc)
                continue
            start = 0
            for job in jobs:
                job.future.set_result(judgments[start : start + len(job.prompts)])
                start += len(job.prompts)
            if self.on_batch is not None:
                self.on_batch(len(jobs), len(prompts), sum(sum(j.token_counts) for j in jobs))

    def _run_call(self, job: _Job) -> None:
        try:
            job.future.set_result(job.call(self.model))
        except Exception as exc:
            job.future.set_exception(exc)


class QueuedModel(JudgeModel):
    """A ``JudgeModel`` whose judgments run on a ``Batcher``'s worker.

    Rendering, tokenising and label resolution run in the caller's thread
    (they only read the model); every forward pass runs on the worker.
    """

    def __init__(self, model: JudgeModel, batcher: Batcher) -> None:
        super().__init__(model.backend, model.spec)
        self.inner = model
        self.batcher = batcher
        self.stats = model.stats

    def resolve_labels(self, labels: Sequence[str]):
        return self.inner.resolve_labels(labels)

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
        if not prompts:
            return []
        return self.batcher.submit(prompts, labels).result()

    def complete(self, prompt: str, max_tokens: int = 256, stop: Sequence[str] = ()) -> str:
        return self.batcher.call(lambda m: m.complete(prompt, max_tokens, stop)).result()

    def close(self) -> None:  # the server owns the real model's lifetime
        pass
