"""``JudgeState``: the one loaded model, its queue, config and counters, per app."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence

from fastapi.concurrency import run_in_threadpool

from judgelab.engine import BackendJudgeModel, Judgment
from judgelab.errors import JudgelabError, LabelError
from judgelab.server._batching import Batcher, BatcherClosedError
from judgelab.server._config import ServerConfig
from judgelab.server._errors import APIError, from_judgelab_error
from judgelab.server._metrics import Metrics
from judgelab.server._queued import QueuedModel, RequestTicket

__all__ = ["JudgeState", "default_labels"]


def default_labels(model: BackendJudgeModel) -> tuple[str, ...]:
    """The model spec's ``fact-check`` task labels (or any task's), else ("Yes", "No")."""
    tasks = model.spec.tasks
    for name in ["fact-check", *sorted(tasks)]:
        task = tasks.get(name)
        if task is not None and len(task.labels) >= 2:
            return tuple(task.labels.values())
    return ("Yes", "No")


class JudgeState:
    """Everything a request handler needs; stored as ``app.state.judge``."""

    def __init__(self, model: BackendJudgeModel, config: ServerConfig) -> None:
        self.model = model
        self.config = config
        self.metrics = Metrics()
        self.batcher = Batcher(
            model,
            window=config.batch_window_ms / 1000.0,
            max_prompts=config.max_batch_prompts,
            turn_tokens=config.turn_tokens,
            on_batch=self.metrics.batch_done,
        )
        self.queued = QueuedModel(model, self.batcher)
        self.labels = tuple(config.labels) if config.labels else default_labels(model)
        self.names = [model.id, *[a for a in config.aliases if a != model.id]]
        self.capabilities: list[str] = ["completion"]
        """What ``/api/show`` reports; a protocol module's ``register`` may add its own."""
        self.policy_evaluators: list[str] = []
        """The ``/v1/evaluate`` evaluators the policy (``config.policy``) decides for."""

    # -- model names ---------------------------------------------------------

    def check_model(self, name: str | None, *, param: str = "model", required: bool = False) -> str:
        """The served model's id for a request's model name; 404 for any other name.

        Ollama-style tags are accepted: ``name`` and ``name:latest`` are the same.
        """
        if not name:
            if required:
                raise APIError(400, f"Missing field {param!r}: name the model, e.g. {self.model.id!r}.",
                               code="missing_model", param=param)
            return self.model.id
        base = name[: -len(":latest")] if name.endswith(":latest") else name
        if base in self.names:
            return self.model.id
        raise APIError(
            404,
            f"Model {name!r} not found: this server serves {self.model.id!r}"
            + (f" (also answering to {', '.join(repr(a) for a in self.names[1:])})" if len(self.names) > 1 else "")
            + ". Use that name, or start judgelab serve with --alias NAME.",
            code="model_not_found",
            param=param,
        )

    # -- judging -------------------------------------------------------------

    def ticket(self) -> RequestTicket:
        """A new request's claim on the worker (its prompt budget and cancellation)."""
        return RequestTicket(self.config.max_request_prompts)

    def resolve_labels(self, labels: Sequence[str] | None) -> tuple[str, ...]:
        chosen = tuple(labels) if labels else self.labels
        try:
            self.model.resolve_labels(chosen)
        except LabelError as exc:
            raise from_judgelab_error(exc, param="labels") from exc
        return chosen

    def label_tokens(self, labels: Sequence[str]) -> int:
        """The tokens the longest of ``labels`` (already resolved) takes to write."""
        return max(self.model.resolve_labels(labels).n_tokens)

    async def judge(
        self, prompts: Sequence[str], labels: Sequence[str], ticket: RequestTicket, *, param: str | None = None
    ) -> list[Judgment]:
        """Judge prompts on the worker, taking turns with concurrent requests.

        The engine's checks (tokenising a long prompt included) run in a
        thread of the pool, never on the worker or the event loop.
        """
        queued = self.queued.for_request(ticket)
        try:
            future = await run_in_threadpool(queued.submit, prompts, labels)
            return await asyncio.wrap_future(future)
        except BatcherClosedError as exc:
            raise APIError(503, str(exc), code="shutting_down") from exc
        except JudgelabError as exc:
            raise from_judgelab_error(exc, param=param) from exc

    async def answer(
        self, prompt: str, labels: Sequence[str], max_tokens: int | None, ticket: RequestTicket,
        *, param: str | None = None,
    ) -> tuple[Judgment, int]:
        """Greedy decoding restricted to ``labels``: the judgment whose label is the text,
        and the tokens that label takes.

        Raises a 400 when the chosen label needs more than ``max_tokens`` tokens
        (``None``: no limit), through the engine's own check.
        """
        judgment = (await self.judge([prompt], labels, ticket, param=param))[0]
        limit = sys.maxsize if max_tokens is None else max_tokens
        try:
            n_out = self.model.check_label_fits(labels, judgment.label, limit, option="num_predict / max_tokens")
        except LabelError as exc:
            raise APIError(400, str(exc), code="max_tokens_too_small", param="max_tokens") from exc
        return judgment, n_out

    def close(self) -> None:
        self.batcher.close()
