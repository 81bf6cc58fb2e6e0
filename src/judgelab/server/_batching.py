"""One worker thread owns the model; requests reach it through a queue, and take turns.

Each request's prompts become a job on the queue. The worker runs *turns*:
one ``judge_many`` call per turn, over one label set, in which every request
waiting for that label set gets at most ``turn_tokens`` prompt tokens' worth
of its prompts (always at least one prompt). A request with fifty document
chunks therefore runs over many turns, and a short request that arrives in
the meantime gets the next turn instead of waiting for all fifty: requests
that arrived since the last turn get a turn of their own (never two in a
row), then everyone is served round-robin, so no label set or request
starves. When the worker
is idle it waits ``window`` seconds after the first job for others to batch
with.

A single prompt longer than ``turn_tokens`` is not one turn: with a model
that can evaluate a prompt in pieces (``JudgeModel.can_prefill``: llama.cpp)
it gets turns of its own, each evaluating at most ``turn_tokens`` of its
tokens (``JudgeModel.prefill``; never fewer than ``MIN_PIECE_TOKENS``, so a
tiny ``turn_tokens`` does not make thousands of tiny decodes), and other
requests run in between. The
engine keeps the interrupted prompt's KV cache meanwhile, so no token is
computed twice, and its judgment, like that of every prompt judged between
its pieces, is the same as alone. The engine decodes whole pieces of its own
(cut after newlines, at most ``piece_tokens``, 128 by default), so a turn's
piece can run past ``turn_tokens`` by up to one of them; that piece is what
a request arriving meanwhile waits for at most.

A job is run exactly once; a prompt that does not fit the context fails its
own job before it is queued (the engine's check, run in the caller's thread,
so tokenising a huge prompt never holds the worker). A job whose future is
cancelled (its client went away) is dropped at the next turn with its
unjudged prompts.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any, TypeVar

from judgelab.engine import BackendJudgeModel, Judgment

__all__ = ["Batcher", "BatcherClosedError", "MIN_PIECE_TOKENS", "prompt_name"]

#: The smallest piece a long prompt is evaluated in; prompts up to this long always go whole.
MIN_PIECE_TOKENS = 64

log = logging.getLogger(__name__)

T = TypeVar("T")


class BatcherClosedError(RuntimeError):
    """The server is shutting down and takes no new work."""


@dataclass(eq=False)
class _Job:
    future: Future[Any]  # list[Judgment] for prompts, the call's result for a call (Batcher.submit, Batcher.call)
    owner: object
    prompts: Sequence[str] = ()
    labels: tuple[str, ...] = ()
    token_counts: Sequence[int] = ()
    call: Callable[[BackendJudgeModel], object] | None = None
    results: list[Judgment | None] = field(default_factory=list)
    cursor: int = 0  # the next prompt to schedule
    done: int = 0  # tokens of the cursor's prompt already evaluated in pieces
    whole: bool = False  # a piece made no progress (its cache was dropped): judge the prompt whole

    def in_pieces(self, budget: int) -> bool:
        """Whether the next prompt needs more than ``budget`` tokens and may go in pieces."""
        return not self.whole and self.cost() > budget

    def cost(self) -> int:
        """Tokens the next prompt still needs."""
        return self.token_counts[self.cursor] - self.done

    def take(self, budget: int, room: int) -> list[int]:
        """Indices of the prompts for this turn: up to ``budget`` tokens, ``room`` prompts, at least one."""
        taken: list[int] = []
        tokens = 0
        while self.cursor < len(self.prompts) and len(taken) < room:
            n = self.cost()
            if taken and tokens + n > budget:
                break
            taken.append(self.cursor)
            tokens += n
            self.cursor += 1
            self.done, self.whole = 0, False
        return taken


_STOP = object()


class Batcher:
    """The queue in front of one model and the worker thread that drains it.

    Parameters
    ----------
    model
        The loaded model; only the worker thread judges with it.
    window
        Seconds an idle worker waits for more jobs after the first one arrives.
    max_prompts
        The most prompts one ``judge_many`` call gets.
    turn_tokens
        The most prompt tokens one request gets in one ``judge_many`` call
        when other requests wait; a longer prompt is evaluated in pieces of
        at most this many tokens when the model can (``can_prefill``), else
        it goes whole.
    on_batch
        Called after each call with ``(n_jobs, n_prompts, prompt_tokens)``.
    """

    def __init__(
        self,
        model: BackendJudgeModel,
        *,
        window: float = 0.005,
        max_prompts: int = 64,
        turn_tokens: int = 128,
        on_batch: Callable[[int, int, int], None] | None = None,
    ) -> None:
        self.model = model
        self.window = window
        self.max_prompts = max_prompts
        self.turn_tokens = turn_tokens
        self.on_batch = on_batch
        self.pieces = bool(getattr(model, "can_prefill", False))  # long prompts in pieces, others between
        self.piece_tokens = max(turn_tokens, MIN_PIECE_TOKENS)
        self._queue: queue.Queue[_Job | object] = queue.Queue()  # jobs, then _STOP
        self._active: deque[_Job] = deque()
        self._fresh_turn = False  # whether the last turn served only newly arrived jobs
        self._closed = False
        self._close_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="judgelab-model-worker", daemon=True)
        self._thread.start()

    # -- submitting ----------------------------------------------------------

    def submit(
        self, prompts: Sequence[str], labels: Sequence[str], *,
        token_counts: Sequence[int] | None = None, owner: object = None,
    ) -> Future[list[Judgment]]:
        """Judge ``prompts`` over ``labels``; the future holds ``list[Judgment]``.

        ``token_counts`` are the prompts' checked token counts; without them
        the engine checks each prompt here, in the caller's thread, and the
        future fails with the engine's ``ContextLengthError`` for one that
        does not fit. Jobs with the same ``owner`` (one HTTP request) share
        one turn budget; cancelling the future drops the unjudged prompts.
        """
        if token_counts is None:
            try:
                token_counts = [self.model.check_prompt(p, what=prompt_name(prompts, i)) for i, p in enumerate(prompts)]
            except Exception as exc:
                failed: Future[list[Judgment]] = Future()
                failed.set_exception(exc)
                return failed
        job = _Job(Future(), owner, list(prompts), tuple(labels), list(token_counts))
        job.results = [None] * len(job.prompts)
        return self._put(job)

    def call(self, fn: Callable[[BackendJudgeModel], T]) -> Future[T]:
        """Run ``fn(model)`` on the worker, between turns (for free-text ``complete``)."""
        return self._put(_Job(Future(), None, call=fn))

    def _put(self, job: _Job) -> Future[Any]:
        with self._close_lock:
            if self._closed:
                raise BatcherClosedError("The judge is shutting down and takes no new requests.")
            self._queue.put(job)
        return job.future

    @property
    def pending(self) -> int:
        """Jobs queued or partly judged."""
        return self._queue.qsize() + len(self._active)

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
        while not (stopping and not self._active):
            if not self._active and not stopping:
                stopping = self._admit(self._queue.get()) or self._gather(time.monotonic() + self.window)
            elif not stopping:
                stopping = self._gather(0.0)
            self._active = deque(j for j in self._active if not j.future.cancelled())
            if not self._active:
                continue
            try:
                self._turn()
            except Exception as exc:  # pragma: no cover - a bug; never let the worker die
                log.exception("judge worker failed on a turn")
                for job in self._active:
                    _settle(job.future, exc=RuntimeError(f"internal error in the judge worker: {exc}"))
                self._active.clear()

    def _gather(self, deadline: float) -> bool:
        """Move queued jobs to the active list until ``deadline``; True once STOP arrived."""
        while True:
            remaining = deadline - time.monotonic()
            try:
                job = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
            except queue.Empty:
                return False
            if self._admit(job):
                return True

    def _admit(self, job: _Job | object) -> bool:
        if not isinstance(job, _Job):  # _STOP
            return True
        if job.call is not None:
            self._run_call(job.future, job.call)
        elif not job.prompts:
            _settle(job.future, [])
        else:
            self._active.append(job)
        return False

    def _turn(self) -> None:
        """One ``judge_many`` call: the head job's label set, a fair share of each waiting job."""
        candidates = self._candidates()
        if self.pieces and candidates[0].in_pieces(self.piece_tokens):
            candidates = self._piece_or_whole(candidates)
            if not candidates:
                return
        labels = candidates[0].labels
        picked: list[tuple[_Job, list[int]]] = []
        spent: dict[int, int] = {}  # tokens taken this turn, per request
        room = self.max_prompts
        for job in candidates:
            key = id(job.owner) if job.owner is not None else id(job)
            budget = self.turn_tokens - spent.get(key, 0)
            if job.labels != labels or room == 0 or budget <= 0:
                continue
            if self.pieces and job.in_pieces(max(budget, MIN_PIECE_TOKENS)):
                continue  # a prompt longer than its share waits for turns of its own, in pieces
            indices = job.take(budget, room)
            spent[key] = spent.get(key, 0) + sum(job.token_counts[i] for i in indices)
            room -= len(indices)
            picked.append((job, indices))
        self._judge(labels, picked)
        # served jobs go to the back, so the next turn starts with someone else
        served = {id(job) for job, _ in picked}
        waiting = [j for j in self._active if id(j) not in served]
        unfinished = [j for j, _ in picked if j.cursor < len(j.prompts)]
        self._active = deque(waiting + unfinished)

    def _piece_or_whole(self, candidates: list[_Job]) -> list[_Job]:
        """The head needs pieces: run one piece (and return []), or return the jobs for a normal turn.

        One prompt at a time is evaluated in pieces (two interleaved long prompts would fragment the
        cache, and their answers would no longer be bit-identical; see docs/server.md). While another
        is part-way, the head waits: the prompts that go whole run, or else the part-way one goes on.
        """
        midway = next((j for j in self._active if j.done), None)
        if midway is None or midway is candidates[0]:
            self._piece(candidates[0])
            return []
        whole = [j for j in candidates if not j.in_pieces(self.piece_tokens)]
        if not whole and midway.in_pieces(self.piece_tokens):
            self._piece(midway)
            return []
        return whole or [midway]

    def _piece(self, job: _Job) -> None:
        """One turn for one long prompt: evaluate up to ``turn_tokens`` more of its tokens, then go to the back."""
        try:
            left = self.model.prefill(job.prompts[job.cursor], self.piece_tokens)
        except Exception as exc:
            job.cursor = len(job.prompts)
            _settle(job.future, exc=exc)
            left = 0
        else:
            done = job.token_counts[job.cursor] - left
            job.whole = done <= job.done  # no progress: never loop on a prompt whose cache keeps being dropped
            job.done = done
        self._active = deque([j for j in self._active if j is not job] + ([job] if left else []))

    def _candidates(self) -> list[_Job]:
        """Jobs that arrived since the last turn get a turn of their own (their answer need not
        wait for a long request's chunk), but never two such turns in a row, so a stream of new
        arrivals cannot starve the jobs already running."""
        fresh = [j for j in self._active if j.cursor == 0 and j.done == 0]
        if fresh and len(fresh) < len(self._active) and not self._fresh_turn:
            self._fresh_turn = True
            return fresh
        self._fresh_turn = False
        return list(self._active)

    def _judge(self, labels: tuple[str, ...], picked: list[tuple[_Job, list[int]]]) -> None:
        prompts = [job.prompts[i] for job, indices in picked for i in indices]
        try:
            judgments = self.model.judge_many(prompts, labels)
        except Exception as exc:
            for job, _ in picked:
                job.cursor = len(job.prompts)
                _settle(job.future, exc=exc)
            return
        start = 0
        for job, indices in picked:
            for i, judgment in zip(indices, judgments[start : start + len(indices)]):
                job.results[i] = judgment
            start += len(indices)
            if job.cursor == len(job.prompts):
                _settle(job.future, list(job.results))
        if self.on_batch is not None:
            tokens = sum(job.token_counts[i] for job, indices in picked for i in indices)
            self.on_batch(len(picked), len(prompts), tokens)

    def _run_call(self, future: Future[object], call: Callable[[BackendJudgeModel], object]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(call(self.model))
        except Exception as exc:
            future.set_exception(exc)


def prompt_name(prompts: Sequence[str], i: int) -> str:
    """How an error names prompt ``i`` of ``prompts``."""
    return "prompt" if len(prompts) == 1 else f"prompt #{i}"


def _settle(future: Future[object], result: object = None, *, exc: BaseException | None = None) -> None:
    """Finish ``future`` unless its client cancelled it meanwhile."""
    try:
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)
    except InvalidStateError:
        pass  # cancelled while its last prompts were being judged
