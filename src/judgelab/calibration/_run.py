"""Scoring runs: score labelled rows with an evaluator into a resumable JSONL file."""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from judgelab.calibration._rows import LabelledRow
from judgelab.errors import DataError, JudgelabError
from judgelab.evaluators._spi import EvaluationResponse, Evaluator, evaluate_many

__all__ = ["ScoreRecord", "read_scores", "run"]

logger = logging.getLogger(__name__)


class ScoreRecord(BaseModel):
    """One scored row, as written to ``scores.jsonl``.

    ``score`` is ``None`` (and ``error`` says why) when the evaluator raised
    for this row; such rows are left out of the analysis and counted, never
    silently scored as a failure.

    ``fold_group`` is the row's ``LabelledRow.fold_group`` (``meta["pair"]``
    or the id): cross-validation keeps records of one group in one fold.
    Records written before the field existed lack it; ``fold_key`` then
    falls back to the id.
    """

    model_config = ConfigDict(extra="allow")

    id: str
    task: str
    label: int
    group: str | None = None
    generator: str | None = None
    split: str | None = None
    fold_group: str | None = None
    probabilities: dict[str, float] | None = None
    score: float | None = None
    raw_score: float | None = None
    passed: bool | None = None
    chunks: list[Any] | None = None
    criteria: dict[str, float] | None = None
    labels: dict[str, int] | None = None
    seconds: float | None = None
    model: str | None = None
    spec_hash: str | None = None
    prompt_tokens: int | None = None
    threshold: float | None = None
    evaluator: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.score is not None and not math.isnan(self.score)

    @property
    def fold_key(self) -> str:
        """The cross-validation group: ``fold_group``, or the id for old records without it."""
        return self.fold_group if self.fold_group else self.id


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if isinstance(value, Mapping):
            return {str(k): _jsonable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [_jsonable(v) for v in value]
        if hasattr(value, "tolist"):
            return value.tolist()
        return repr(value)


def _criteria_scores(meta: Mapping[str, Any]) -> dict[str, float] | None:
    """Per-criterion scores from a criteria evaluator's metadata, if any."""
    crit = meta.get("criteria")
    if not isinstance(crit, Mapping):
        return None
    out = {}
    for name, value in crit.items():
        if isinstance(value, Mapping):
            value = value.get("score", value.get("probability"))
        if isinstance(value, (int, float)):
            out[str(name)] = float(value)
    return out or None


def _record(row: LabelledRow, resp: EvaluationResponse | None, seconds: float, evaluator: Any, error: str | None = None) -> dict[str, Any]:
    meta = dict(resp.metadata) if resp is not None else {}
    rec = ScoreRecord(
        id=row.id,
        task=row.task,
        label=row.label,
        group=row.group,
        generator=row.generator,
        split=row.split,
        fold_group=row.fold_group,
        probabilities=_jsonable(meta.get("probabilities")),
        score=float(resp.score) if resp is not None else None,
        raw_score=meta.get("raw_score", resp.score if resp is not None else None),
        passed=bool(resp.passed) if resp is not None else None,
        chunks=_jsonable(meta.get("chunks")),
        criteria=_criteria_scores(meta),
        labels=dict(row.labels) if row.labels else None,
        seconds=round(seconds, 6),
        model=meta.get("model"),
        spec_hash=meta.get("spec_hash"),
        prompt_tokens=meta.get("prompt_tokens"),
        threshold=meta.get("threshold"),
        evaluator=type(evaluator).__name__,
        error=error,
    )
    return rec.model_dump(exclude_none=True)


def read_scores(path: str | Path, *, repair: bool = False) -> list[ScoreRecord]:
    """Read a ``scores.jsonl`` file.

    Parameters
    ----------
    path
        The run file.
    repair
        A run killed while writing can leave a partial last line. When true,
        that line is cut off the file (so a resumed run appends cleanly);
        when false it is ignored with a warning. A malformed line anywhere
        else raises ``DataError`` naming it.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"Cannot read run file {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    records: list[ScoreRecord] = []
    lines = data.split(b"\n")
    offset = 0
    for lineno, raw in enumerate(lines, start=1):
        is_last = lineno == len(lines) or (lineno == len(lines) - 1 and lines[-1] == b"")
        if raw.strip():
            try:
                records.append(ScoreRecord.model_validate_json(raw))
            except ValidationError as exc:
                truncated = is_last and not data.endswith(b"\n")
                if truncated:
                    logger.warning("%s:%d is a partial record (a run was interrupted); %s", path, lineno,
                                   "cutting it off" if repair else "ignoring it")
                    if repair:
                        with path.open("r+b") as fh:
                            fh.truncate(offset)
                    break
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err.get("loc", ())) or None
                raise DataError(
                    f"Malformed run record at {path}:{lineno}"
                    + (f" field {field!r}" if field else "")
                    + f": {err.get('msg')}. Delete the line (the row will be rescored) or use a new output file.",
                    path=str(path),
                    line=lineno,
                    field=field,
                ) from exc
        offset += len(raw) + 1
    return records


def _progress(total: int, initial: int, enabled: bool):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, initial=initial, unit="row", desc="scoring", disable=not enabled, dynamic_ncols=True)


def run(
    evaluator: Evaluator,
    rows: Iterable[LabelledRow],
    *,
    out: str | Path,
    batch_size: int = 8,
    progress: bool = True,
) -> list[ScoreRecord]:
    """Score rows with an evaluator, writing one JSONL record per row as it is scored.

    Rerunning with the same ``out`` skips rows whose id is already there, so
    a killed or interrupted run resumes where it stopped; a kill loses at
    most the batch in flight (each record is flushed and fsynced when
    written). Rows that failed with an error are retried on resume; the
    newest record of a row wins. Rows go to the evaluator through ``evaluate_many`` in batches
    of ``batch_size`` so that the engine can share prompt prefixes.

    Parameters
    ----------
    evaluator
        Any ``Evaluator``.
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

    Returns
    -------
    list of ScoreRecord
        The records of ``rows``, in row order (read back from ``out``).

    Raises
    ------
    DataError
        If ``out`` holds records written by a different model (spec hash).
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise JudgelabError(f"The 'batch_size' parameter of run must be an int >= 1. Got {batch_size!r} instead.")
    rows = list(rows)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    existing = read_scores(out, repair=True) if out.exists() else []
    done = {r.id for r in existing if r.error is None}  # rows that failed are retried
    hashes = {r.spec_hash for r in existing if r.spec_hash}
    todo = [r for r in rows if r.id not in done]
    if existing:
        logger.info("resuming %s: %d of %d rows already scored", out, len(rows) - len(todo), len(rows))
    bar = _progress(len(rows), len(rows) - len(todo), progress)
    try:
        with out.open("a", encoding="utf-8") as fh:
            for start in range(0, len(todo), batch_size):
                batch = todo[start : start + batch_size]
                for rec in _score_batch(evaluator, batch):
                    h = rec.get("spec_hash")
                    if h and hashes and h not in hashes:
                        raise DataError(
                            f"{out} holds scores from another model (spec hash {sorted(hashes)[0]}, "
                            f"now {h}). Write this run to a new output file.",
                            path=str(out),
                        )
                    if h:
                        hashes.add(h)
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                if bar is not None:
                    bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
    by_id = {r.id: r for r in read_scores(out)}
    # Records resumed from a file written before ``fold_group`` existed get
    # it from their row here, so the analysis of this run still keeps pairs
    # together (the file itself is left as it is).
    return [
        by_id[r.id] if by_id[r.id].fold_group else by_id[r.id].model_copy(update={"fold_group": r.fold_group})
        for r in rows
        if r.id in by_id
    ]


def _score_batch(evaluator: Evaluator, batch: Sequence[LabelledRow]) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    try:
        responses = evaluate_many(evaluator, [r.to_request() for r in batch])
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as exc:  # isolate the failing row(s)
        if len(batch) == 1:
            logger.warning("row %s failed: %s", batch[0].id, exc)
            return [_record(batch[0], None, time.perf_counter() - t0, evaluator, f"{type(exc).__name__}: {exc}")]
        out = []
        for row in batch:
            out.extend(_score_batch(evaluator, [row]))
        return out
    if len(responses) != len(batch):
        raise JudgelabError(
            f"{type(evaluator).__name__}.evaluate_many returned {len(responses)} responses for {len(batch)} requests."
        )
    per_row = (time.perf_counter() - t0) / len(batch)
    return [_record(row, resp, per_row, evaluator) for row, resp in zip(batch, responses)]
