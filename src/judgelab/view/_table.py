"""The rows table: filter, search, sort and page a run's rows on the server.

``RowQuery`` is what the page's form and ``/api/rows`` send; ``query_rows`` answers it with one
``RowsPage`` (the page's rows and the count that matched), working on the run's column arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from judgelab.view._run import ViewRun

__all__ = ["SORT_KEYS", "VERDICT_FILTERS", "RowQuery", "RowsPage", "TableRow", "query_rows", "table_row"]

#: Columns the table sorts on (``disagreement`` is the default: confident and wrong first).
SORT_KEYS = ("disagreement", "score", "calibrated", "label", "verdict", "id", "task", "group", "split")

#: ``verdict`` filters: the verdict at the shipped threshold against the label.
VERDICT_FILTERS = {
    "": "any",
    "wrong": "verdict differs from label",
    "right": "verdict agrees with label",
    "false-pass": "passed, label 0",
    "false-fail": "failed, label 1",
    "pass": "passed",
    "fail": "failed",
    "error": "not scored (error)",
}

Order = Literal["asc", "desc"]


class RowQuery(BaseModel):
    """One request for a page of rows (every field optional; blank means no filter)."""

    model_config = ConfigDict(extra="ignore")

    task: str = ""
    group: str = ""
    split: str = ""
    verdict: str = ""
    min_score: float | None = Field(default=None, ge=0, le=1)
    max_score: float | None = Field(default=None, ge=0, le=1)
    q: str = ""
    sort: str = "disagreement"
    order: Order = "desc"
    page: int = Field(default=1, ge=1)
    per_page: int = Field(default=50, ge=1, le=500)


@dataclass(frozen=True)
class TableRow:
    """One row of the table, as the page shows it."""

    index: int
    id: str
    task: str
    label: int
    score: float | None
    calibrated: float | None
    verdict: str
    right: bool | None
    group: str
    split: str
    unit: str
    claim: str
    document: str

    def to_dict(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k != "index"}


@dataclass(frozen=True)
class RowsPage:
    """A page of rows: the rows, how many matched the filters, and the page's place."""

    rows: tuple[TableRow, ...]
    total: int
    matched: int
    page: int
    pages: int
    query: RowQuery

    def to_dict(self) -> dict[str, object]:
        return {"total": self.total, "matched": self.matched, "page": self.page, "pages": self.pages,
                "rows": [r.to_dict() for r in self.rows]}


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def table_row(run: ViewRun, i: int) -> TableRow:
    """Row ``i`` of ``run`` (its records' order) with its set row's claim and document, when the set was read."""
    c = run.columns
    assert c is not None
    rec = run.records[i]
    row = run.rows.get(rec.id)
    score = _num(c.score[i])
    verdict = "error" if score is None else ("pass" if c.passed[i] else "fail")
    right = None if score is None else bool(c.passed[i]) == (rec.label == 1)
    return TableRow(index=i, id=rec.id, task=rec.task, label=rec.label, score=score, calibrated=_num(c.calibrated[i]),
                    verdict=verdict, right=right, group=rec.group or "", split=rec.split or "", unit=rec.unit,
                    claim=row.response if row is not None else "",
                    document="\n\n".join(row.documents) if row is not None and row.documents else
                    (row.user_text if row is not None else ""))


def _verdict_mask(run: ViewRun, verdict: str) -> npt.NDArray[np.bool_]:
    c = run.columns
    assert c is not None
    scored = ~np.isnan(c.score)
    right = c.passed == (c.label == 1)
    masks: dict[str, npt.NDArray[np.bool_]] = {
        "wrong": scored & ~right, "right": scored & right,
        "false-pass": scored & c.passed & (c.label == 0), "false-fail": scored & ~c.passed & (c.label == 1),
        "pass": scored & c.passed, "fail": scored & ~c.passed, "error": ~scored,
    }
    return masks.get(verdict, np.ones(len(c.score), dtype=bool))


def _search_mask(run: ViewRun, idx: npt.NDArray[np.intp], q: str) -> npt.NDArray[np.bool_]:
    """Which of the rows ``idx`` hold ``q`` (case-insensitive) in their id, claim, question or documents."""
    needle = q.lower()
    out = np.zeros(len(idx), dtype=bool)
    for k, i in enumerate(idx):
        rec = run.records[int(i)]
        row = run.rows.get(rec.id)
        hay = rec.id if row is None else " ".join([rec.id, row.response, row.user_text, *row.documents])
        out[k] = needle in hay.lower()
    return out


def _filtered(run: ViewRun, q: RowQuery) -> npt.NDArray[np.intp]:
    """Indices of the rows that pass the query's filters and search, in records' order."""
    c = run.columns
    assert c is not None
    mask = _verdict_mask(run, q.verdict)
    for value, column in ((q.task, c.task), (q.group, c.group), (q.split, c.split)):
        if value:
            mask &= column == value
    if q.min_score is not None:
        mask &= c.score >= q.min_score
    if q.max_score is not None:
        mask &= c.score <= q.max_score
    idx = np.flatnonzero(mask)
    if q.q.strip():
        idx = idx[_search_mask(run, idx, q.q.strip())]
    return idx


def _sort_key(run: ViewRun, key: str) -> npt.NDArray[np.float64]:
    c = run.columns
    assert c is not None
    numeric = {"disagreement": c.disagreement, "score": c.score, "calibrated": c.calibrated,
               "label": c.label.astype(float), "verdict": np.where(np.isnan(c.score), np.nan, c.passed.astype(float))}
    if key in numeric:
        return numeric[key]
    column = {"id": c.ids, "task": c.task, "group": c.group, "split": c.split}.get(key, c.ids)
    return np.unique(column, return_inverse=True)[1].astype(float)  # sortable ranks of the strings


def _ordered(run: ViewRun, idx: npt.NDArray[np.intp], sort: str, order: Order) -> npt.NDArray[np.intp]:
    """``idx`` sorted by ``sort`` (ties by id order in the file), nan (failed rows) always last."""
    key = _sort_key(run, sort if sort in SORT_KEYS else "disagreement")[idx]
    nan = np.isnan(key)
    key = np.where(nan, 0.0, key)
    if order == "desc":
        key = -key
    return idx[np.lexsort((idx, key, nan))]


def query_rows(run: ViewRun, query: RowQuery) -> RowsPage:
    """The page of ``run``'s rows that ``query`` asks for: filtered, searched, sorted, then paged."""
    idx = _ordered(run, _filtered(run, query), query.sort, query.order)
    pages = max(1, math.ceil(len(idx) / query.per_page))
    page = min(query.page, pages)
    start = (page - 1) * query.per_page
    rows = tuple(table_row(run, int(i)) for i in idx[start:start + query.per_page])
    return RowsPage(rows, total=len(run.records), matched=len(idx), page=page, pages=pages, query=query)

