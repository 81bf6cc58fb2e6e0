"""``RayExecutor``: score a run's rows on a Ray cluster (``pip install 'judgelab[ray]'``).

Ray is imported when a ``RayExecutor`` runs, never when judgelab is imported.

Replicas are Ray *actors*, one per replica, each building its evaluator once
from a picklable factory (so the model loads once per replica, on the
replica's node and device). The driver keeps the routing: it cuts the rows
into blocks that keep a document's rows together (``plan_blocks``), hands
each replica at most ``blocks_in_flight`` blocks at a time, takes each
finished block back with ``ray.wait`` and yields its records to ``run()``,
which appends them to ``scores.jsonl``. A block is the unit of retry: a
replica that dies (SIGKILL, OOM, a lost node) loses only its unfinished
blocks, which go to another replica, and the dead replica is restarted.
Because records are only written when a whole block comes back, every row
is written exactly once.

Ray Data's ``map_batches`` with an actor pool was the other candidate; it
was not chosen because it decides batch boundaries and placement itself
(keeping a document's rows on one replica would need a shuffle by key), its
output is a dataset to consume rather than blocks to append and fsync as
they finish, and it needs ``ray[data]`` (pyarrow, pandas) for what is a
queue of a few thousand blocks.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from judgelab.calibration.data import LabelledRow
from judgelab.calibration.scoring._executor import Block, BlockReport, ExecutionReport, ReplicaReport, plan_blocks, score_rows, tokens_decoded
from judgelab.calibration.scoring._factory import EvaluatorFactory, EvaluatorSource, is_factory
from judgelab.errors import ExecutorError, JudgelabError
from judgelab.evaluators import Evaluator

__all__ = ["RayExecutor", "INSTALL_HINT"]

logger = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'judgelab[ray]'"


def import_ray() -> ModuleType:
    """The ``ray`` module, or an ``ExecutorError`` that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError(
            f"Scoring on Ray needs the 'ray' package, which is not installed ({exc}). "
            f"Install the extra: {INSTALL_HINT}",
            executor="ray",
            extra="ray",
        ) from exc
    return ray


class _Replica:
    """The Ray actor behind one replica: builds the evaluator once, then scores blocks."""

    def __init__(self, factory: Callable[[], Evaluator], batch_size: int) -> None:
        self.evaluator = factory()
        self.batch_size = batch_size

    def ready(self) -> tuple[int, str | None]:
        """This replica's process id and node, once its evaluator is built."""
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    def pid(self) -> int:
        return os.getpid()

    def score(self, rows: Sequence[LabelledRow]) -> tuple[list[dict[str, object]], int | None, float]:
        """The records of a block, the engine tokens it decoded and the seconds it took."""
        t0 = time.perf_counter()
        before = tokens_decoded(self.evaluator)
        records = [rec for chunk in score_rows(self.evaluator, rows, batch_size=self.batch_size) for rec in chunk]
        after = tokens_decoded(self.evaluator)
        decoded = None if before is None or after is None else after - before
        return records, decoded, time.perf_counter() - t0


@dataclass
class _Slot:
    """The driver's view of one replica (a slot survives restarts of its actor)."""

    index: int
    handle: Any = None
    generation: int = 0
    ready: bool = False
    in_flight: int = 0
    restarts: int = 0
    dead: bool = False
    pid: int | None = None
    node: str | None = None
    rows: int = 0
    blocks: int = 0
    tokens: int | None = 0
    seconds: float = 0.0


@dataclass
class RayExecutor:
    """Score rows on Ray actors, one evaluator per replica; records stream back to ``run()``.

    Parameters
    ----------
    address
        The cluster: ``None`` (the cluster this process is connected to, else
        Ray's default: ``RAY_ADDRESS`` or a new local cluster), ``"auto"`` (a
        running cluster on this machine or ``RAY_ADDRESS``), ``"local"`` (a new
        cluster in this process), or ``"HOST:PORT"`` / ``"ray://HOST:10001"``.
    replicas
        How many replicas (actors) to start; each loads the model once.
    replica_threads
        CPUs reserved per replica and the engine's ``n_threads``.
    gpus_per_replica
        GPUs reserved per replica (may be fractional); with GPUs the factory
        offloads all layers (see ``EvaluatorFactory.for_replica``).
    block_size
        Rows per block (the unit of routing and retry). Rows of one
        ``block_key`` are never split, so a block may be larger.
    block_key
        ``"document"`` (default: rows sharing the task, user text and
        documents, i.e. a prompt prefix), ``"pair"`` (``meta["pair"]``),
        ``"row"`` or a callable row -> key.
    blocks_in_flight
        Blocks queued on each replica at once (2 hides the round trip).
    max_attempts
        Tries per block before the run stops with an ``ExecutorError``.
    max_restarts
        Restarts per replica after its process died.
    runtime_env
        Ray ``runtime_env`` for the job (e.g. ``{"pip": ["judgelab[ray]"]}``
        or ``{"working_dir": "."}``) when this process starts the connection.
    init_options
        More keyword arguments for ``ray.init`` when this process connects.

    Attributes
    ----------
    report
        The ``ExecutionReport`` of the last run (per replica rows, blocks,
        tokens decoded, retries).
    replica_pids
        ``{replica: pid}`` of the replicas' current processes.
    """

    address: str | None = None
    replicas: int = 2
    replica_threads: int = 1
    gpus_per_replica: float = 0
    block_size: int = 32
    block_key: str | Callable[[LabelledRow], str] = "document"
    blocks_in_flight: int = 2
    max_attempts: int = 3
    max_restarts: int = 3
    runtime_env: dict[str, object] | None = None
    init_options: dict[str, object] = field(default_factory=dict)
    report: ExecutionReport | None = field(default=None, init=False)
    replica_pids: dict[int, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        for name, low in (("replicas", 1), ("replica_threads", 1), ("block_size", 1), ("blocks_in_flight", 1),
                          ("max_attempts", 1), ("max_restarts", 0)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < low:
                raise JudgelabError(f"The {name!r} parameter of RayExecutor must be an int >= {low}. Got {value!r} instead.")
        if not isinstance(self.gpus_per_replica, (int, float)) or self.gpus_per_replica < 0:
            raise JudgelabError(
                f"The 'gpus_per_replica' parameter of RayExecutor must be a number >= 0. Got {self.gpus_per_replica!r} instead."
            )

    # -- connection ----------------------------------------------------------

    def _connect(self, ray: ModuleType) -> bool:
        """Connect to (or start) the cluster; True when this call did, so it also shuts it down."""
        if ray.is_initialized():
            return False
        options: dict[str, object] = {"logging_level": logging.WARNING, "log_to_driver": False}
        if self.address in (None, "local"):
            options["include_dashboard"] = False
        if self.runtime_env:
            options["runtime_env"] = self.runtime_env
        options.update(self.init_options)
        try:
            ray.init(address=self.address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise _connect_error(self.address, exc) from exc
        logger.info("connected to Ray (%s)", self.address or "default address")
        return True

    def _check_resources(self, ray: ModuleType) -> None:
        """Warn when no node of the cluster as it is now can hold one replica (its actors would wait)."""
        total = ray.cluster_resources()
        short = [f"{need:g} {name}" for name, need in (("CPU", self.replica_threads), ("GPU", self.gpus_per_replica))
                 if need and total.get(name, 0) < need]
        if short:
            logger.warning(
                "The Ray cluster has %s; one replica needs %s. The replicas wait until an autoscaler adds "
                "nodes; lower --replica-threads / --gpus-per-replica if none will come.",
                ", ".join(f"{total.get(k, 0):g} {k}" for k in ("CPU", "GPU")), " and ".join(short),
            )

    # -- the run ---------------------------------------------------------------

    def execute(
        self, source: EvaluatorSource, rows: Sequence[LabelledRow], *, batch_size: int
    ) -> Iterator[list[dict[str, object]]]:
        """Score ``rows`` on the replicas, yielding each finished block's records."""
        ray = import_ray()
        if not is_factory(source):
            raise JudgelabError(
                f"RayExecutor builds the evaluator on each replica, so run() needs a factory, not a "
                f"built {type(source).__name__} (a loaded model is never shipped). Pass e.g. "
                "EvaluatorFactory('gemma-3-270m', 'fact-check'), or any picklable zero-argument callable "
                "that returns your evaluator."
            )
        factory = source.for_replica(threads=self.replica_threads, gpus=self.gpus_per_replica) if isinstance(
            source, EvaluatorFactory) else source
        blocks = plan_blocks(rows, block_size=self.block_size, key=self.block_key)
        started = self._connect(ray)
        self._check_resources(ray)
        t0 = time.perf_counter()
        actor_cls = ray.remote(_Replica).options(
            num_cpus=self.replica_threads, num_gpus=self.gpus_per_replica, max_restarts=0, max_task_retries=0
        )
        sched = _Scheduler(self, ray, lambda: actor_cls.remote(factory, batch_size), blocks)
        try:
            for slot in sched.slots:
                sched.start(slot)
            while sched.pending or any(kind == "block" for kind, *_ in sched.waiting.values()):
                sched.dispatch()
                records = sched.next_result()
                if records is not None:
                    yield records
        finally:
            sched.kill_all()
            self.report = sched.report(time.perf_counter() - t0)
            if started:
                ray.shutdown()


class _Scheduler:
    """One ``RayExecutor.execute`` call: its replicas (slots), the blocks still to score and what came back."""

    def __init__(self, executor: RayExecutor, ray: ModuleType, new_actor: Callable[[], Any], blocks: Sequence[Block]) -> None:
        self.ex = executor
        self.ray = ray
        self.new_actor = new_actor
        self.slots = [_Slot(i) for i in range(min(executor.replicas, len(blocks)))]
        self.waiting: dict[object, tuple[str, _Slot, int, Block | None]] = {}
        self.block_reports: dict[int, BlockReport] = {}
        self.attempts: dict[int, int] = {}
        self.avoid: dict[int, set[int]] = {}
        self.pending: deque[Block] = deque(blocks)
        self.retried = 0
        self.restarted = 0

    def start(self, slot: _Slot) -> None:
        slot.handle = self.new_actor()
        slot.ready = False
        slot.in_flight = 0
        self.waiting[slot.handle.ready.remote()] = ("ready", slot, slot.generation, None)

    def lose(self, slot: _Slot, generation: int, why: BaseException) -> None:
        if generation != slot.generation or slot.dead:
            return  # this actor was already replaced
        self.ray.kill(slot.handle, no_restart=True)
        self.ex.replica_pids.pop(slot.index, None)
        if slot.restarts >= self.ex.max_restarts:
            slot.dead = True
            logger.warning("Ray replica %d died and is not restarted (%d restarts): %s", slot.index, slot.restarts, why)
            return
        slot.restarts += 1
        slot.generation += 1
        self.restarted += 1
        logger.warning("Ray replica %d died (%s); restarting it", slot.index, type(why).__name__)
        self.start(slot)

    def next_block(self, slot: _Slot) -> Block | None:
        # a block lost with this replica goes elsewhere, unless no other replica is up to take it
        others = any(s is not slot and s.ready and not s.dead for s in self.slots)
        for i, block in enumerate(self.pending):
            if slot.index not in self.avoid.get(block.index, ()) or not others:
                del self.pending[i]
                return block
        return None

    def dispatch(self) -> None:
        """Hand pending blocks to ready replicas, up to ``blocks_in_flight`` each."""
        for slot in sorted(self.slots, key=lambda s: s.in_flight):
            while slot.ready and not slot.dead and slot.in_flight < self.ex.blocks_in_flight and self.pending:
                # a second block only when every other replica (ready or still loading) can get a first
                idle = sum(1 for s in self.slots if s is not slot and not s.dead and s.in_flight == 0)
                if slot.in_flight and len(self.pending) <= idle:
                    break
                block = self.next_block(slot)
                if block is None:
                    break
                self.attempts[block.index] = self.attempts.get(block.index, 0) + 1
                self.waiting[slot.handle.score.remote(block.rows)] = ("block", slot, slot.generation, block)
                slot.in_flight += 1

    def next_result(self) -> list[dict[str, object]] | None:
        """Wait for the next answer: a finished block's records, or ``None`` (a replica is ready or was lost)."""
        ray = self.ray
        if not self.waiting:
            raise ExecutorError(
                f"Every Ray replica died; {sum(len(b.rows) for b in self.pending)} rows were not scored "
                "(the rows already written are kept: rerun to resume).",
                executor="ray",
            )
        (ref,), _ = ray.wait(list(self.waiting), num_returns=1)
        kind, slot, generation, block = self.waiting.pop(ref)
        try:
            value = ray.get(ref)
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                ray.exceptions.ObjectLostError, ray.exceptions.ActorUnavailableError) as exc:
            self._lost(kind, slot, generation, block, exc)
            return None
        except ray.exceptions.RayTaskError as exc:
            raise ExecutorError(
                f"Ray replica {slot.index} raised while {'building its evaluator' if kind == 'ready' else 'scoring'}: "
                f"{exc}", executor="ray"
            ) from exc
        if kind == "ready":
            slot.ready = True
            slot.pid, slot.node = value
            self.ex.replica_pids[slot.index] = slot.pid
            return None
        assert block is not None
        records: list[dict[str, object]]
        records, decoded, seconds = value
        slot.in_flight -= 1
        slot.rows += len(records)
        slot.blocks += 1
        slot.seconds += seconds
        slot.tokens = None if decoded is None or slot.tokens is None else slot.tokens + decoded
        self.block_reports[block.index] = BlockReport(
            block.index, slot.index, tuple(r.id for r in block.rows), self.attempts[block.index], decoded, seconds
        )
        return records

    def _lost(self, kind: str, slot: _Slot, generation: int, block: Block | None, exc: BaseException) -> None:
        """A replica died while loading or scoring: requeue its block (or give up) and restart it."""
        if kind == "ready" and _init_failed(exc):
            raise ExecutorError(
                f"Ray replica {slot.index} could not build its evaluator: {exc}. Check that the "
                "model resolves on every node ('judgelab models' there) and that judgelab is "
                "installed in the cluster's environment (runtime_env).",
                executor="ray",
            ) from exc
        if block is not None:
            if self.attempts[block.index] >= self.ex.max_attempts:
                raise ExecutorError(
                    f"Block {block.index} ({len(block.rows)} rows, first id {block.rows[0].id!r}) failed "
                    f"{self.attempts[block.index]} times on Ray replicas; last error: {exc}. "
                    "The rows already written are kept: rerun to resume.",
                    executor="ray",
                ) from exc
            self.avoid.setdefault(block.index, set()).add(slot.index)
            self.pending.appendleft(block)
            self.retried += 1
            logger.warning("block %d lost with replica %d; retrying it on another replica", block.index, slot.index)
        self.lose(slot, generation, exc)

    def kill_all(self) -> None:
        for slot in self.slots:
            if slot.handle is not None:
                try:
                    self.ray.kill(slot.handle, no_restart=True)
                except Exception:  # noqa: BLE001 - best effort: the actor may be gone already
                    pass

    def report(self, seconds: float) -> ExecutionReport:
        slots = self.slots
        return ExecutionReport(
            executor="ray",
            rows=sum(s.rows for s in slots),
            seconds=seconds,
            replicas=tuple(ReplicaReport(s.index, s.rows, s.blocks, s.tokens, s.seconds, s.pid, s.node) for s in slots),
            blocks=tuple(self.block_reports[i] for i in sorted(self.block_reports)),
            retried_blocks=self.retried,
            restarted_replicas=self.restarted,
        )


def _connect_error(address: str | None, exc: BaseException) -> ExecutorError:
    """One line, in judgelab's words, for a cluster that cannot be reached (Ray's own message is multi-line)."""
    if address in (None, "auto") and isinstance(exc, ConnectionError):
        return ExecutorError(
            "--ray found no running Ray cluster (address 'auto': RAY_ADDRESS is not set and no cluster was "
            "started on this machine). Use '--ray local' to start one in this process, or run 'ray start --head' "
            "to start one to share and pass --ray again.",
            executor="ray",
        )
    first = " ".join(str(exc).split(". ")[0].split()) or type(exc).__name__
    return ExecutorError(
        f"Cannot connect to the Ray cluster at {address}: {first.rstrip('.')}. Check the address (HOST:PORT or "
        "ray://HOST:10001), run 'ray start --head' to start a cluster, or use '--ray local' to start one in "
        "this process.",
        executor="ray",
    )


def _init_failed(exc: BaseException) -> bool:
    """Whether a dead actor died in its constructor (the evaluator could not be built)."""
    if getattr(exc, "_actor_init_failed", False):
        return True
    cause = getattr(exc, "cause", None) or getattr(exc, "creation_task_error", None)
    return cause is not None and "RayTaskError" in type(cause).__name__
