"""Resume planning: which saved records a rerun keeps, and which rows it scores again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judgelab.calibration.data import LabelledRow, ScoreRecord, content_hashes, row_hash
from judgelab.errors import DataError
from judgelab.evaluators import EvaluatorIdentity

__all__ = ["ResumePlan", "plan_resume", "row_fields"]


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
        prev = latest.get(row.id)
        if prev is None or prev.error is not None:
            todo.append(row)
            continue
        why = _stale_reason(prev, row, row_hash(row))
        if why is None:
            reuse[row.id] = prev.model_copy(update=row_fields(row))
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


def row_fields(row: LabelledRow) -> dict[str, object]:
    return {"task": row.task, "label": row.label, "group": row.group, "generator": row.generator,
            "split": row.split, "unit": row.unit, "content_hashes": content_hashes(row)}
