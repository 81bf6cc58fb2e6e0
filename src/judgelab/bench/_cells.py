"""Scoring a bench's cells: one judge at a time over every set, resumable, a failure kept to its cells.

A cell is one judge on one set; its rows go to ``DIR/cells/<judge>/<set>/scores.jsonl`` in the
calibrate format, through the scoring layer's ``run`` (one write and fsync per batch, so a kill loses
at most the batch in flight). A judge is loaded only when one of its cells has rows to score, and
closed before the next judge loads. A judge that cannot load, or a served judge that stops
answering, marks its cells failed or partial with the error in one line; the bench goes on.
"""

from __future__ import annotations

import gc
import logging
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgelab.bench._memory import PeakMemory
from judgelab.bench._records import CellOutcome, CellStatus, JudgeCost
from judgelab.bench._sets import BenchSet
from judgelab.bench._spec import JudgeEntry
from judgelab.bench._stability import repeat_path, repeat_sample
from judgelab.calibration.data import LabelledRow, ScoreRecord, read_scores
from judgelab.calibration.pipeline import task_identity
from judgelab.calibration.scoring import (
    EvaluatorFactory,
    EvaluatorSource,
    Executor,
    LazyModel,
    LocalExecutor,
    ResumePlan,
    default_evaluator_for,
    plan_resume,
    run,
)
from judgelab.errors import DataError
from judgelab.evaluators import Evaluator, evaluate_many

__all__ = ["CellSettings", "JudgeRun", "cell_path", "score_judge"]

logger = logging.getLogger(__name__)

#: Rows timed one by one, for a served judge's latency percentiles.
LATENCY_PROBE_ROWS = 20


@dataclass(frozen=True)
class CellSettings:
    """How cells are scored: rows per evaluator call, the progress bar, and the stability repeats."""

    batch_size: int = 8
    progress: bool = True
    repeats: int = 0
    repeat_rows: int = 20
    seed: int = 0


@dataclass(frozen=True)
class JudgeRun:
    """A judge's cells (``{set folder: outcome}``) and cost after scoring."""

    judge: JudgeEntry
    outcomes: dict[str, CellOutcome]
    cost: JudgeCost


def cell_path(out: Path, judge: JudgeEntry, bench_set: BenchSet) -> Path:
    return out / "cells" / judge.folder / bench_set.folder / "scores.jsonl"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _set_aside(path: Path, why: str) -> None:
    """Keep a cell's records of another judge under a new name (never deleted) and start the cell anew."""
    stale = path.with_name(f"scores.replaced-{time.strftime('%Y%m%d-%H%M%S')}.jsonl")
    path.rename(stale)
    logger.warning("%s: %s; kept as %s and rescoring this cell", path, why, stale.name)


def _plan(judge: LazyModel, rows: Sequence[LabelledRow], task: str, path: Path) -> ResumePlan | None:
    """Which of ``rows`` ``path`` already holds (``None``: nothing yet; records of a changed judge are set aside)."""
    if not path.exists():
        return None
    identity = task_identity(task, judge, {})
    try:
        return plan_resume(read_scores(path, repair=True), rows, identity=identity, path=path)
    except DataError as exc:
        if "scored by another" not in str(exc):
            raise
        _set_aside(path, "the judge, its spec or its evaluator changed since these rows were scored")
        return None


class _Scorer:
    """Builds each task's evaluator once, on the loaded judge (local) or as a factory (a distributed executor)."""

    def __init__(self, entry: JudgeEntry, lazy: LazyModel, executor: Executor | None) -> None:
        self.entry, self.lazy, self.executor = entry, lazy, executor
        self.distributed = executor is not None and not isinstance(executor, LocalExecutor)
        self.sources: dict[str, EvaluatorSource] = {}
        self.load_seconds: float | None = None

    def source(self, task: str) -> EvaluatorSource:
        if task not in self.sources:
            if self.distributed:
                options = self.entry.load_options()
                backend = str(options.pop("backend", "llama_cpp"))
                self.sources[task] = EvaluatorFactory(self.entry.model, task, backend=backend, model_options=options)
            else:
                t0 = time.perf_counter()
                model = self.lazy.load()
                if self.load_seconds is None:
                    self.load_seconds = time.perf_counter() - t0
                self.sources[task] = default_evaluator_for(task, model, hint="keep that task out of the bench with --task.")
        return self.sources[task]


def _score_cell(scorer: _Scorer, bench_set: BenchSet, path: Path, *, batch_size: int, progress: bool) -> CellOutcome:
    label = scorer.entry.label
    records: list[ScoreRecord] = []
    scored_now = 0
    for task, rows in bench_set.by_task.items():
        plan = _plan(scorer.lazy, rows, task, path)
        if plan is not None and not plan.todo:
            records += [plan.reuse[r.id] for r in rows]
            continue
        todo = len(rows) if plan is None else len(plan.todo)
        logger.info("bench: %s on %s: scoring %d of %d %s rows", label, bench_set.argument, todo, len(rows), task)
        scored_now += todo
        records += run(scorer.source(task), rows, out=path, batch_size=batch_size, progress=progress,
                       executor=scorer.executor)
    n_rows = bench_set.n_rows
    n_ok = sum(1 for r in records if r.ok)
    errors = [r.error for r in records if r.error]
    status: CellStatus = "complete" if n_ok == n_rows else ("failed" if not n_ok else "partial")
    error = None if status == "complete" else (errors[0] if errors else "scoring stopped before every row had a score")
    return CellOutcome(judge=label, set=bench_set.argument, status=status, n_rows=n_rows, n_scored=n_ok,
                       scored_now=scored_now, error=error)


def _failed(entry: JudgeEntry, bench_set: BenchSet, exc: BaseException) -> CellOutcome:
    logger.warning("bench: %s on %s failed: %s", entry.label, bench_set.argument, _one_line(exc))
    return CellOutcome(judge=entry.label, set=bench_set.argument, status="failed", n_rows=bench_set.n_rows,
                       n_scored=0, error=f"{type(exc).__name__}: {_one_line(exc)}")


def _is_remote(lazy: LazyModel) -> bool:
    spec = lazy.spec_before_loading
    return spec is not None and getattr(spec, "remote", None) is not None


def _latency(scorer: _Scorer, sets: Sequence[BenchSet]) -> tuple[float | None, float | None]:
    """p50 and p95 wall time of single judgments of a served judge (rows of the first set, timed one by one)."""
    task, rows = next(iter(sets[0].by_task.items()))
    evaluator = scorer.source(task)
    if not isinstance(evaluator, Evaluator):
        return None, None
    times = []
    for row in rows[:LATENCY_PROBE_ROWS]:
        t0 = time.perf_counter()
        try:
            evaluate_many(evaluator, [row.to_request()])
        except Exception:  # noqa: BLE001 - a served judge that fails here was already counted in its cells
            return None, None
        times.append(time.perf_counter() - t0)
    if not times:
        return None, None
    p95 = statistics.quantiles(times, n=20, method="inclusive")[18] if len(times) > 1 else times[0]
    return round(statistics.median(times), 6), round(p95, 6)


def _cost(entry: JudgeEntry, remote: bool, cells: Sequence[Path], previous: JudgeCost | None) -> JudgeCost:
    """The judge's cost from its records (every cell's ``seconds``), keeping what only a scoring run measures."""
    seconds = [r.seconds for p in cells if p.exists() for r in read_scores(p) if r.ok and r.seconds is not None]
    total = float(sum(seconds))
    base = previous.model_dump() if previous is not None else {}
    base.update(judge=entry.label, remote=remote, judgments=len(seconds), scoring_seconds=round(total, 6),
                judgments_per_second=round(len(seconds) / total, 4) if total > 0 else None,
                seconds_per_judgment=round(total / len(seconds), 6) if seconds else None)
    return JudgeCost.model_validate(base)


def _read_cost(path: Path) -> JudgeCost | None:
    try:
        return JudgeCost.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _repeat(scorer: _Scorer, bench_set: BenchSet, path: Path, settings: CellSettings) -> None:
    """Rescore the stability sample of a complete cell ``settings.repeats`` times (each repeat resumable)."""
    for task, rows in bench_set.by_task.items():
        sample = repeat_sample(rows, dict(bench_set.split[task]), settings.repeat_rows, settings.seed)
        for k in range(1, settings.repeats + 1):
            run(scorer.source(task), sample, out=repeat_path(path, k), batch_size=settings.batch_size, progress=False,
                executor=scorer.executor)


def score_judge(entry: JudgeEntry, sets: Sequence[BenchSet], out: Path, *, executor: Executor | None = None,
                settings: CellSettings | None = None) -> JudgeRun:
    """Score (or resume) every cell of one judge, then release it; its cells' outcomes and its cost."""
    settings = settings or CellSettings()
    lazy = LazyModel(entry.model, entry.load_options())
    scorer = _Scorer(entry, lazy, executor)
    remote = False
    outcomes: dict[str, CellOutcome] = {}
    cost_path = out / "cells" / entry.folder / "cost.json"
    previous = _read_cost(cost_path)
    measured: dict[str, float | None] = {}
    t0 = time.perf_counter()
    with PeakMemory() as memory:
        try:
            for s in sets:
                try:
                    path = cell_path(out, entry, s)
                    outcomes[s.folder] = _score_cell(scorer, s, path, batch_size=settings.batch_size,
                                                     progress=settings.progress)
                    if settings.repeats and outcomes[s.folder].status == "complete":
                        _repeat(scorer, s, path, settings)
                except Exception as exc:  # noqa: BLE001 - a judge's fault stays in its cells
                    outcomes[s.folder] = _failed(entry, s, exc)
            remote = _is_remote(lazy)
            if remote and any(o.scored_now for o in outcomes.values()) and not scorer.distributed:
                measured["latency_p50_seconds"], measured["latency_p95_seconds"] = _latency(scorer, sets)
        finally:
            lazy.close()
            scorer.sources.clear()
            gc.collect()
    if any(o.scored_now for o in outcomes.values()):
        measured["wall_seconds"] = round(time.perf_counter() - t0, 3)
        measured["load_seconds"] = None if scorer.load_seconds is None else round(scorer.load_seconds, 3)
        if not remote and not scorer.distributed:
            measured["peak_rss_mib"] = memory.peak_mib
    cost = _cost(entry, remote, [cell_path(out, entry, s) for s in sets], previous)
    cost = cost.model_copy(update=measured)
    cost_path.parent.mkdir(parents=True, exist_ok=True)
    cost_path.write_text(cost.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return JudgeRun(entry, outcomes, cost)
