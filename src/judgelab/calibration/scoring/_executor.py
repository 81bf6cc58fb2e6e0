"""Executors: where ``run()`` scores its rows.

``run()`` owns the run file (resume, the spec-hash check, writing and
fsyncing records); an executor only turns rows into records. It receives the
rows still to score and an evaluator (or a factory that builds one) and
yields lists of finished record dicts, in any order; ``run()`` appends each
list to ``scores.jsonl`` as it arrives. ``LocalExecutor`` (the default)
scores in this process; ``RayExecutor`` (``judgelab[ray]``) on a Ray cluster.

Rows are cut into blocks that keep together the rows sharing a prompt prefix
(``plan_blocks``), so that a replica's engine reuses the prefix as a local
run does.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast, runtime_checkable

from judgelab.calibration.data import LabelledRow
from judgelab.calibration.scoring._batch import is_unreachable, score_batch
from judgelab.calibration.scoring._factory import EvaluatorSource, is_factory
from judgelab.errors import JudgelabError
from judgelab.evaluators import Evaluator

__all__ = [
    "BLOCK_KEYS",
    "STOP_AFTER_UNREACHABLE",
    "Block",
    "BlockReport",
    "ExecutionReport",
    "Executor",
    "LocalExecutor",
    "ReplicaReport",
    "block_key",
    "plan_blocks",
    "score_rows",
    "tokens_decoded",
]

logger = logging.getLogger(__name__)

#: Consecutive rows that could not reach the judge's server (each after the client's own retries with
#: backoff) after which a run stops scoring instead of failing every remaining row.
STOP_AFTER_UNREACHABLE = 3

#: How rows are kept together in blocks: by shared document (prompt prefix), by ``meta["pair"]``, or not at all.
BLOCK_KEYS = ("document", "pair", "row")


@dataclass(frozen=True)
class Block:
    """Rows that are scored together, on one replica, in ``batch_size`` batches."""

    index: int
    rows: tuple[LabelledRow, ...]


@dataclass(frozen=True)
class BlockReport:
    """Where a block was scored: the replica that finished it and how many tries it took."""

    index: int
    replica: int
    row_ids: tuple[str, ...]
    attempts: int
    tokens_decoded: int | None
    seconds: float


@dataclass(frozen=True)
class ReplicaReport:
    """What one replica did: rows, blocks, engine tokens decoded, its process and node."""

    replica: int
    rows: int
    blocks: int
    tokens_decoded: int | None
    seconds: float
    pid: int | None = None
    node: str | None = None


@dataclass(frozen=True)
class ExecutionReport:
    """What an executor did in one ``run()``.

    ``tokens_decoded`` sums the engine's decoded prompt tokens over replicas
    (``None`` when the evaluator's model does not count them): the prefix
    reuse a run kept. ``retried_blocks`` counts blocks lost with a replica and
    scored again elsewhere.
    """

    executor: str
    rows: int
    seconds: float
    replicas: tuple[ReplicaReport, ...] = ()
    blocks: tuple[BlockReport, ...] = ()
    retried_blocks: int = 0
    restarted_replicas: int = 0

    @property
    def tokens_decoded(self) -> int | None:
        counts = [r.tokens_decoded for r in self.replicas]
        known = [c for c in counts if c is not None]
        return sum(known) if counts and len(known) == len(counts) else None

    def replica_of(self) -> dict[str, int]:
        """``{row id: replica}`` for every row scored in this run."""
        return {rid: b.replica for b in self.blocks for rid in b.row_ids}

    def summary(self) -> str:
        """A few lines: per replica rows, blocks and tokens decoded, then the totals."""
        lines = [
            f"replica {r.replica}: {r.rows} rows in {r.blocks} blocks, "
            f"{'?' if r.tokens_decoded is None else r.tokens_decoded} tokens decoded"
            + (f" (pid {r.pid})" if r.pid else "")
            for r in self.replicas
        ]
        total = self.tokens_decoded
        lines.append(
            f"{self.executor}: {self.rows} rows in {self.seconds:.1f} s on {len(self.replicas)} replica(s), "
            f"{'?' if total is None else total} tokens decoded in all"
            + (f", {self.retried_blocks} block(s) retried" if self.retried_blocks else "")
        )
        return "\n".join(lines)


@runtime_checkable
class Executor(Protocol):
    """Scores rows into record dicts; ``run()`` writes them.

    ``execute`` yields lists of records (one list per finished batch or
    block, in any order), each record the dict ``run()`` appends to
    ``scores.jsonl``. Every row of ``rows`` must come back exactly once.
    After the generator ends, ``report`` says what was done.
    """

    report: ExecutionReport | None

    def execute(
        self, source: EvaluatorSource, rows: Sequence[LabelledRow], *, batch_size: int
    ) -> Iterator[list[dict[str, object]]]: ...


def tokens_decoded(evaluator: Evaluator) -> int | None:
    """The prompt tokens the evaluator's engine has decoded so far (``None`` if not counted)."""
    model = getattr(evaluator, "model", None)
    count = getattr(getattr(model, "backend", None), "tokens_evaluated", None)
    return int(count) if isinstance(count, int) else None


def block_key(row: LabelledRow, key: str | Callable[[LabelledRow], str] = "document") -> str:
    """The key that keeps ``row`` in one block with the rows sharing it.

    ``"document"``: the task, user text and documents (rows judged against
    one document share the prompt prefix); ``"pair"``: the row's unit,
    ``LabelledRow.unit`` (``meta["pair"]``, the row's id when unset); ``"row"``: the id (no grouping); or a callable.
    """
    if callable(key):
        return str(key(row))
    if key == "document":
        h = hashlib.blake2b(digest_size=12)
        for part in (row.task, row.user_text, *row.documents):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
        return h.hexdigest()
    if key == "pair":
        return row.unit
    if key == "row":
        return row.id
    raise JudgelabError(f"The 'block_key' parameter must be one of {', '.join(BLOCK_KEYS)} or a callable. Got {key!r} instead.")


def plan_blocks(
    rows: Sequence[LabelledRow], *, block_size: int, key: str | Callable[[LabelledRow], str] = "document"
) -> list[Block]:
    """Cut rows into blocks of about ``block_size`` rows, never splitting a key's rows.

    Rows of one key are gathered (in first-seen order, row order within a
    key) and whole keys are packed into blocks; a key with more than
    ``block_size`` rows is a block of its own.
    """
    if not isinstance(block_size, int) or block_size < 1:
        raise JudgelabError(f"The 'block_size' parameter must be an int >= 1. Got {block_size!r} instead.")
    by_key: dict[str, list[LabelledRow]] = {}
    for row in rows:
        by_key.setdefault(block_key(row, key), []).append(row)
    blocks: list[Block] = []
    current: list[LabelledRow] = []
    for members in by_key.values():
        if current and len(current) + len(members) > block_size:
            blocks.append(Block(len(blocks), tuple(current)))
            current = []
        current.extend(members)
    if current:
        blocks.append(Block(len(blocks), tuple(current)))
    return blocks


def score_rows(evaluator: Evaluator, rows: Sequence[LabelledRow], *, batch_size: int) -> Iterator[list[dict[str, object]]]:
    """Score rows in ``batch_size`` batches with a built evaluator, yielding each batch's records.

    After ``STOP_AFTER_UNREACHABLE`` rows in a row failed because the judge's server could not be
    reached, scoring stops (the rows left get no record; the run is partial, and resumes).
    """
    from judgelab.evaluators import evaluator_identity

    identity = evaluator_identity(evaluator)
    streak = 0
    for start in range(0, len(rows), batch_size):
        errors: dict[str, BaseException] = {}
        records = score_batch(evaluator, rows[start : start + batch_size], identity, errors)
        yield records
        for rec in records:
            exc = errors.get(str(rec["id"]))
            streak = streak + 1 if exc is not None and is_unreachable(exc) else 0
        if streak >= STOP_AFTER_UNREACHABLE:
            left = len(rows) - start - len(records)
            if left:
                logger.info("the judge server stopped answering (%d rows in a row could not reach it): "
                             "stopping with %d rows left unscored; run again to resume", streak, left)
            return


def close_built(evaluator: Evaluator) -> None:
    """Free the model of an evaluator that an executor built from a factory."""
    close = getattr(getattr(evaluator, "model", None), "close", None)
    if callable(close):
        close()


@dataclass
class LocalExecutor:
    """Score in this process, in row order, ``batch_size`` rows per ``evaluate_many`` call.

    The default executor of ``run()``. Given a factory, it builds the
    evaluator once and frees its model at the end.
    """

    report: ExecutionReport | None = field(default=None, init=False)

    def execute(
        self, source: EvaluatorSource, rows: Sequence[LabelledRow], *, batch_size: int
    ) -> Iterator[list[dict[str, object]]]:
        t0 = time.perf_counter()
        built = is_factory(source)
        evaluator = source() if is_factory(source) else cast(Evaluator, source)
        before = tokens_decoded(evaluator)
        done = 0
        try:
            for records in score_rows(evaluator, rows, batch_size=batch_size):
                done += len(records)
                yield records
        finally:
            after = tokens_decoded(evaluator)
            seconds = time.perf_counter() - t0
            decoded = None if before is None or after is None else after - before
            self.report = ExecutionReport(
                executor="local",
                rows=done,
                seconds=seconds,
                replicas=(ReplicaReport(0, done, 1 if done else 0, decoded, seconds),),
                blocks=(BlockReport(0, 0, tuple(r.id for r in rows[:done]), 1, decoded, seconds),) if done else (),
            )
            if built:
                close_built(evaluator)
