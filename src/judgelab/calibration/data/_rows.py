"""Labelled-set rows: the schema, reading and writing JSONL."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judgelab.calibration.data._renamed import warn_renamed
from judgelab.errors import DataError
from judgelab.evaluators import Document, EvaluationRequest
from judgelab.textfiles import read_text

__all__ = ["LabelledRow", "LabelledSet", "Task", "load_rows", "write_rows", "TASKS"]

logger = logging.getLogger(__name__)

Task = Literal["fact-check", "relevancy", "criteria", "rubric"]
TASKS: tuple[str, ...] = ("fact-check", "relevancy", "criteria", "rubric")


class LabelledRow(BaseModel):
    """One labelled example: what the judge sees and what it should answer.

    ``label`` is 1 when the judge should pass the response and 0 when it
    should fail it. For fact-check rows the document(s) are in ``documents``
    and the claim in ``response``; for relevancy rows ``user_text`` is the
    query, ``documents`` the context and ``response`` the answer.

    ``licence`` names the licence of the row's text (an SPDX id where one
    exists, e.g. ``CC-BY-SA-3.0``), for sets that are redistributed.

    Rows that belong together (for example the right and the hallucinated
    answer to one question) share ``meta["pair"]`` in the file; they form
    one resampling *unit* (see ``unit``) that cross-validation keeps in one
    fold and the bootstrap draws as a whole.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    task: Task
    user_text: str = ""
    documents: list[str] = Field(default_factory=list)
    response: str
    label: Literal[0, 1]
    level: int | None = None
    labels: dict[str, Literal[0, 1]] | None = None
    generator: str | None = None
    split: Literal["dev", "test"] | None = None
    group: str | None = None
    licence: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("label", mode="before")
    @classmethod
    def _bool_label(cls, value: object) -> object:
        # JSON true/false are accepted as 1/0; anything else must be 0 or 1.
        if isinstance(value, bool):
            return int(value)
        return value

    @property
    def unit(self) -> str:
        """The row's resampling unit: rows of one unit stay in one fold and are resampled together.

        This is the one place that reads the file field ``meta["pair"]``:
        the unit is ``meta["pair"]`` (as a string) when the row sets it,
        otherwise the row's ``id``, so that a row without a pair is a unit of
        its own. Everything downstream (``ScoreRecord.unit``, folds,
        bootstraps, policies) uses this value.
        """
        pair = self.meta.get("pair")
        return self.id if pair is None or pair == "" else str(pair)

    @property
    def fold_group(self) -> str:
        """Deprecated name of ``unit`` (removed in the next release)."""
        warn_renamed("fold_group", "unit", "LabelledRow")
        return self.unit

    def to_request(self) -> EvaluationRequest:
        """The ``EvaluationRequest`` a fact-check or relevancy evaluator judges."""
        return EvaluationRequest(
            user_text=self.user_text,
            data_list=tuple(Document(d) for d in self.documents),
            response_content=self.response,
        )


@dataclass(frozen=True)
class LabelledSet:
    """Rows read from one file, with what was skipped.

    Attributes
    ----------
    rows
        The valid rows, in file order.
    path
        The file they came from (``None`` for rows built in memory).
    skipped
        ``(line, message)`` for every row skipped with ``skip_invalid``.
    """

    rows: tuple[LabelledRow, ...]
    path: str | None = None
    skipped: tuple[tuple[int, str], ...] = ()

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[LabelledRow]:
        return iter(self.rows)


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or None
    return field or "", err.get("msg", str(exc))


def load_rows(path: str | Path, *, skip_invalid: bool = False) -> LabelledSet:
    """Read a labelled set from a JSONL file.

    Parameters
    ----------
    path
        A JSONL file, one ``LabelledRow`` object per line (blank lines are
        ignored).
    skip_invalid
        When false (the default) the first malformed row raises; when true,
        malformed rows and duplicate ids are skipped and listed in
        ``LabelledSet.skipped``.

    Returns
    -------
    LabelledSet

    Raises
    ------
    DataError
        If the file cannot be read, or a row is malformed (naming the file,
        the line and the field) and ``skip_invalid`` is false.
    """
    path = Path(path)
    text = read_text(path, "labelled set",
                     fix="Check the path, or import a data set with 'judgelab sets import'.")
    rows: list[LabelledRow] = []
    skipped: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        field: str | None = None
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
            row = LabelledRow.model_validate(obj)
            if row.id in seen:
                field = "id"
                raise ValueError(f"duplicate id {row.id!r} (first on line {seen[row.id]})")
        except json.JSONDecodeError as exc:
            message = f"not valid JSON ({exc.msg} at column {exc.colno})"
        except ValidationError as exc:
            field, message = _first_error(exc)
        except ValueError as exc:
            message = str(exc)
        else:
            seen[row.id] = lineno
            rows.append(row)
            continue
        where = f"{path}:{lineno}" + (f" field {field!r}" if field else "")
        if not skip_invalid:
            raise DataError(
                f"Malformed row at {where}: {message}. Fix the row, or pass "
                "--skip-invalid (skip_invalid=True) to skip and count bad rows.",
                path=str(path),
                line=lineno,
                field=field or None,
            )
        skipped.append((lineno, f"{where}: {message}"))
    if skipped:
        logger.warning("skipped %d malformed row(s) in %s", len(skipped), path)
    return LabelledSet(rows=tuple(rows), path=str(path), skipped=tuple(skipped))


def write_rows(rows: Iterable[LabelledRow], path: str | Path) -> int:
    """Write rows as JSONL (UTF-8, one object per line); returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row.model_dump(exclude_none=True), ensure_ascii=False) + "\n")
            n += 1
    return n
