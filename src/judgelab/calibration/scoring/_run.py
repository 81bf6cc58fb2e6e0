"""Scoring runs: score labelled rows with an evaluator into a resumable JSONL file."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from judgelab.calibration.data import LabelledRow, ScoreRecord, read_scores
from judgelab.calibration.scoring._executor import Executor, LocalExecutor
from judgelab.calibration.scoring._factory import is_factory
from judgelab.calibration.scoring._resume import plan_resume, row_fields
from judgelab.errors import DataError, JudgelabError
from judgelab.evaluators import Evaluator, evaluator_identity

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["run"]

logger = logging.getLogger(__name__)


def _progress(total: int, initial: int, enabled: bool) -> tqdm[NoReturn] | None:
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, initial=initial, unit="row", desc="scoring", disable=not enabled, dynamic_ncols=True)


def run(
    evaluator: Evaluator | Callable[[], Evaluator],
    rows: Iterable[LabelledRow],
    *,
    out: str | Path,
    batch_size: int = 8,
    progress: bool = True,
    executor: Executor | None = None,
) -> list[ScoreRecord]:
    """Score rows with an evaluator, writing one JSONL record per row as it is scored.

    Rerunning with the same ``out`` resumes: a kill loses at most the batch in
    flight (each batch is flushed and fsynced together). A saved record is
    reused only when its row, the model spec and the evaluator configuration
    are unchanged (``plan_resume``, checked before anything is scored);
    changed rows are rescored with a warning, records of another judge are
    refused, failed rows are retried, the newest record of a row wins. Rows go
    through ``evaluate_many`` in batches, so the engine can share prefixes.
    When the judge's server stops answering (``STOP_AFTER_UNREACHABLE`` rows
    in a row cannot reach it), scoring stops: the rows left get no record,
    and the caller's ``check_publishable`` counts them as failed.

    Parameters
    ----------
    evaluator
        Any ``Evaluator``, or a picklable zero-argument callable that builds
        one (``EvaluatorFactory``), which a distributed executor needs: each
        replica builds its own evaluator from it.
    rows
        The labelled rows (ids must be unique).
    out
        The ``scores.jsonl`` file to write or resume.
    batch_size
        Rows per ``evaluate_many`` call (>= 1). A batch that raises is
        retried row by row; a row that still raises gets a record with
        ``error`` set and no score.
    progress
        Show a tqdm progress bar (rate and ETA) on stderr.
    executor
        Where rows are scored: ``LocalExecutor()`` (the default, this
        process) or ``RayExecutor(...)`` (a Ray cluster). Records come back
        to this process and are written here either way, so the file, the
        resume and the analysis are the same. After the run,
        ``executor.report`` says what each replica did.

    Returns
    -------
    list of ScoreRecord
        The records of ``rows``, in row order (read back from ``out``).

    Raises
    ------
    DataError
        If ``out`` holds records of these rows written by a different model
        spec or evaluator configuration.
    """
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise JudgelabError(f"The 'batch_size' parameter of run must be an int >= 1. Got {batch_size!r} instead.")
    rows = list(rows)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # a factory's identity is known where it builds its evaluator (each record carries it); a built
    # evaluator's is checked against the saved records before anything is scored
    identity = None if is_factory(evaluator) else evaluator_identity(evaluator)
    existing = read_scores(out, repair=True) if out.exists() else []
    plan = plan_resume(existing, rows, identity=identity, path=out)
    todo = plan.todo
    if plan.changed:
        logger.warning("%s: %s; rescoring them", out, plan.describe())
        _drop_records(out, {r.id for r in todo})
    if existing:
        logger.info("resuming %s: %d of %d rows already scored", out, len(plan.reuse), len(rows))
    hashes = {r.spec_hash for r in plan.reuse.values() if r.spec_hash}
    executor = executor if executor is not None else LocalExecutor()
    bar = _progress(len(rows), len(rows) - len(todo), progress)
    chunks = executor.execute(evaluator, todo, batch_size=batch_size) if todo else iter(())
    _append(out, chunks, hashes, bar)
    if executor.report is not None and todo:
        logger.info("%s", executor.report.summary())
    by_id = {r.id: r for r in read_scores(out)}
    # labels, splits and units come from the rows (the set file), never a saved record (the row hash
    # guarantees they agree); records resumed from before the ``fold_group`` key existed get their unit here
    return [by_id[r.id].model_copy(update=row_fields(r)) for r in rows if r.id in by_id]


def _check_same_model(rec: Mapping[str, object], hashes: set[str], out: Path) -> None:
    """After scoring: refuse a model whose spec hash was not known before scoring (e.g. a bare GGUF)."""
    h = rec.get("spec_hash")
    if h and hashes and h not in hashes:
        raise DataError(
            f"{out} holds scores from another model (spec hash {sorted(hashes)[0]}, "
            f"now {h}). Write this run to a new output file.",
            path=str(out),
        )
    if h:
        hashes.add(str(h))


def _drop_records(path: Path, ids: set[str]) -> None:
    """Rewrite ``path`` without the records of ``ids`` (atomically: a kill leaves the old or the new file)."""
    kept = [line for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line).get("id") not in ids]
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write("".join(line + "\n" for line in kept))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _append(out: Path, chunks: Iterator[list[dict[str, object]]], hashes: set[str], bar: tqdm[NoReturn] | None) -> None:
    """Append each batch of records as it arrives (one write and one fsync per batch or block)."""
    try:
        with out.open("a", encoding="utf-8") as fh:
            for records in chunks:
                for rec in records:
                    _check_same_model(rec, hashes, out)
                # one write and one fsync per batch or block: a kill loses at most what is in flight
                fh.write("".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records))
                fh.flush()
                os.fsync(fh.fileno())
                if bar is not None:
                    bar.update(len(records))
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()  # stops the executor's work (a generator's finally frees replicas and models)
        if bar is not None:
            bar.close()
