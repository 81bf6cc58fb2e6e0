"""Scoring runs: score labelled rows with an evaluator into a resumable JSONL file."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from judgelab.calibration._factory import is_factory
from judgelab.calibration._row_changes import content_hashes
from judgelab.calibration._rows import LabelledRow
from judgelab.errors import DataError, JudgelabError
from judgelab.evaluators import (
    EvaluationResponse,
    Evaluator,
    EvaluatorIdentity,
    evaluate_many,
    evaluator_identity,
    judgment_detail,
)

if TYPE_CHECKING:
    from judgelab.calibration._executor import Executor

__all__ = ["ResumePlan", "ScoreRecord", "plan_resume", "read_scores", "row_hash", "run"]

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

    ``row_hash`` (``row_hash(row)``), ``spec_hash`` and ``evaluator_hash``
    say what was scored and by which judge: a resumed run reuses a record
    only when all three still match (see ``plan_resume``). ``content_hashes``
    hash each part of the row (documents, user text, response, other
    fields) so that ``judgelab gate`` can say what changed in a row.
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
    template_hash: str | None = None
    prompt_tokens: int | None = None
    threshold: float | None = None
    evaluator: str | None = None
    label_mass: float | None = None
    error: str | None = None
    row_hash: str | None = None
    content_hashes: dict[str, str] | None = None
    evaluator_hash: str | None = None

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


def row_hash(row: LabelledRow) -> str:
    """A short sha256 of everything a row says except its id (text, documents, label, task, ...).

    A saved record whose ``row_hash`` differs from its row's was scored from
    other content (or judged against another label) and is never reused.
    """
    payload = json.dumps(row.model_dump(mode="json", exclude={"id"}), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class ResumePlan:
    """Which saved records a resumed run keeps and which rows it scores.

    Attributes
    ----------
    reuse
        ``{row id: record}`` of records whose row, spec and evaluator still match.
    todo
        Rows to score, in row order: never scored, failed before, or changed.
    changed
        ``{reason: count}`` for rows whose saved record is stale (rescored).
    """

    reuse: dict[str, ScoreRecord]
    todo: list[LabelledRow]
    changed: dict[str, int] = field(default_factory=dict)

    @property
    def n_changed(self) -> int:
        return sum(self.changed.values())

    def describe(self) -> str:
        """``"3 rows changed since they were scored (label: 2, text or documents: 1)"``, or ``""``."""
        if not self.changed:
            return ""
        reasons = ", ".join(f"{why}: {n}" for why, n in sorted(self.changed.items()))
        return f"{self.n_changed} row(s) changed since they were scored ({reasons})"


def _stale_reason(rec: ScoreRecord, row: LabelledRow, h: str) -> str | None:
    if rec.row_hash is None:
        return "no row hash (written by an older judgelab)"
    if rec.row_hash == h:
        return None
    if rec.label != row.label:
        return "label"
    if rec.task != row.task:
        return "task"
    return "text, documents or other fields"


def plan_resume(
    existing: Iterable[ScoreRecord],
    rows: Sequence[LabelledRow],
    *,
    identity: EvaluatorIdentity | None = None,
    path: str | Path = "scores.jsonl",
) -> ResumePlan:
    """Match saved records to rows before anything is scored.

    A record is reused only when its ``row_hash`` equals the row's and its
    ``spec_hash`` and ``evaluator_hash`` equal ``identity``'s (where both
    sides know them). Rows whose record is stale are scored again and counted
    by reason; records of rows that failed are retried.

    Raises
    ------
    DataError
        If records of these rows were scored by another model spec or another
        evaluator configuration: mixing judges in one run would report numbers
        of neither. The message says how many records and what to do.
    """
    latest: dict[str, ScoreRecord] = {}
    for rec in existing:
        latest[rec.id] = rec  # the newest record of a row wins
    mine = [latest[r.id] for r in rows if r.id in latest and latest[r.id].error is None]
    if identity is not None:
        _refuse_other_judge(mine, identity, path)
    reuse: dict[str, ScoreRecord] = {}
    todo: list[LabelledRow] = []
    changed: Counter[str] = Counter()
    for row in rows:
        rec = latest.get(row.id)
        if rec is None or rec.error is not None:
            todo.append(row)
            continue
        why = _stale_reason(rec, row, row_hash(row))
        if why is None:
            reuse[row.id] = rec.model_copy(update=_row_fields(row))
        else:
            changed[why] += 1
            todo.append(row)
    return ResumePlan(reuse, todo, dict(changed))


def _refuse_other_judge(records: Sequence[ScoreRecord], identity: EvaluatorIdentity, path: str | Path) -> None:
    for attr, now, what in (
        ("spec_hash", identity.spec_hash, "another model spec"),
        ("evaluator_hash", identity.evaluator_hash, "another evaluator configuration (template, threshold, labels or calibrator)"),
    ):
        if now is None:
            continue
        other = [r for r in records if getattr(r, attr) and getattr(r, attr) != now]
        if other:
            was = sorted({getattr(r, attr) for r in other})
            raise DataError(
                f"{path} holds {len(other)} record(s) scored by {what} ({attr} {', '.join(was)}, now {now}); "
                "they cannot be reused. Write this run to a new output folder (--out), or delete the file to rescore.",
                path=str(path),
            )


def _template_hash(evaluator: Any) -> str | None:
    """The evaluator's threshold-independent question hash (``YesNoEvaluator.template_hash``), if it has one."""
    value = getattr(evaluator, "template_hash", None)
    return value if isinstance(value, str) else None


def _record(
    row: LabelledRow,
    resp: EvaluationResponse | None,
    seconds: float,
    evaluator: Any,
    error: str | None = None,
    identity: EvaluatorIdentity | None = None,
) -> dict[str, Any]:
    detail = judgment_detail(resp) if resp is not None else None
    rec = ScoreRecord(
        id=row.id,
        task=row.task,
        label=row.label,
        group=row.group,
        generator=row.generator,
        split=row.split,
        fold_group=row.fold_group,
        probabilities=_jsonable(dict(detail.probabilities)) if detail and detail.probabilities else None,
        score=float(resp.score) if resp is not None else None,
        raw_score=detail.raw_score if detail else None,
        passed=bool(resp.passed) if resp is not None else None,
        chunks=_jsonable(list(detail.chunks)) if detail and detail.chunks else None,
        criteria=dict(detail.criteria) if detail and detail.criteria else None,
        labels=dict(row.labels) if row.labels else None,
        seconds=round(seconds, 6),
        model=detail.model if detail else None,
        spec_hash=(detail.spec_hash if detail else None) or (identity.spec_hash if identity is not None else None),
        template_hash=_template_hash(evaluator),
        prompt_tokens=detail.prompt_tokens if detail else None,
        threshold=detail.threshold if detail else None,
        evaluator=type(evaluator).__name__,
        label_mass=resp.metadata.get("label_mass") if resp is not None else None,
        error=error,
        row_hash=row_hash(row),
        content_hashes=content_hashes(row),
        evaluator_hash=identity.evaluator_hash if identity is not None else None,
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
    evaluator: Evaluator | Callable[[], Evaluator],
    rows: Iterable[LabelledRow],
    *,
    out: str | Path,
    batch_size: int = 8,
    progress: bool = True,
    executor: Executor | None = None,
) -> list[ScoreRecord]:
    """Score rows with an evaluator, writing one JSONL record per row as it is scored.

    Rerunning with the same ``out`` skips rows already scored, so a killed or
    interrupted run resumes where it stopped; a kill loses at most the batch
    in flight (each batch's records are flushed and fsynced together). A saved
    record is reused only when its row's content, the model spec and the
    evaluator configuration are unchanged (``plan_resume``, checked before
    anything is scored): changed rows are rescored (their stale records are
    removed and a warning says how many and why), and records of another
    judge are refused. Rows that failed with an error are retried on resume;
    the newest record of a row wins. Rows go to the evaluator through ``evaluate_many`` in batches
    of ``batch_size`` so that the engine can share prompt prefixes.

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
    if executor is None:
        from judgelab.calibration._executor import LocalExecutor  # the executors import this module

        executor = LocalExecutor()
    bar = _progress(len(rows), len(rows) - len(todo), progress)
    chunks = executor.execute(evaluator, todo, batch_size=batch_size) if todo else iter(())
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
    if executor.report is not None and todo:
        logger.info("%s", executor.report.summary())
    by_id = {r.id: r for r in read_scores(out)}
    # Labels, splits and groups always come from the rows (the set file), never
    # from a saved record; the row hash guarantees they agree. Records resumed
    # from a file written before ``fold_group`` existed get it here too.
    return [by_id[r.id].model_copy(update=_row_fields(r)) for r in rows if r.id in by_id]


def _row_fields(row: LabelledRow) -> dict[str, Any]:
    return {"task": row.task, "label": row.label, "group": row.group, "generator": row.generator,
            "split": row.split, "fold_group": row.fold_group, "content_hashes": content_hashes(row)}


def _check_same_model(rec: Mapping[str, Any], hashes: set[str], out: Path) -> None:
    """After scoring: refuse a model whose spec hash was not known before scoring (e.g. a bare GGUF)."""
    h = rec.get("spec_hash")
    if h and hashes and h not in hashes:
        raise DataError(
            f"{out} holds scores from another model (spec hash {sorted(hashes)[0]}, "
            f"now {h}). Write this run to a new output file.",
            path=str(out),
        )
    if h:
        hashes.add(h)


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


def _score_batch(
    evaluator: Evaluator, batch: Sequence[LabelledRow], identity: EvaluatorIdentity | None = None
) -> list[dict[str, Any]]:
    t0 = time.perf_counter()
    try:
        responses = evaluate_many(evaluator, [r.to_request() for r in batch])
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as exc:  # isolate the failing row(s)
        if len(batch) == 1:
            logger.warning("row %s failed: %s", batch[0].id, exc)
            return [_record(batch[0], None, time.perf_counter() - t0, evaluator, f"{type(exc).__name__}: {exc}", identity)]
        out = []
        for row in batch:
            out.extend(_score_batch(evaluator, [row], identity))
        return out
    if len(responses) != len(batch):
        raise JudgelabError(
            f"{type(evaluator).__name__}.evaluate_many returned {len(responses)} responses for {len(batch)} requests."
        )
    per_row = (time.perf_counter() - t0) / len(batch)
    return [_record(row, resp, per_row, evaluator, identity=identity) for row, resp in zip(batch, responses)]
