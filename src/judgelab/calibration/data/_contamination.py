"""What the overlap index finds, summed up: a report for ``judgelab sets overlap`` and tuning's exclusion."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from judgelab.calibration.data._overlap import OVERLAP_KINDS, OverlapIndex, OverlapKind, OverlapOptions
from judgelab.calibration.data._rows import LabelledRow

__all__ = ["OverlapReport", "OverlapPair", "Exclusion", "overlap_report", "overlap_groups"]

log = logging.getLogger(__name__)

#: How many example pairs a report keeps per (source, kind).
FIRST_IDS = 5


class OverlapPair(TypedDict):
    """One overlapping pair: the evaluation row, the training set and row, the kind and what they share.

    ``shared`` is the shared sentence or claim (normalised, cut to 120
    characters), the Jaccard similarity of a near-duplicate pair, or ``""``
    for a shared row or document.
    """

    evaluation_id: str
    training_set: str
    training_id: str
    kind: str
    shared: str


class KindOverlap(TypedDict):
    """One kind of overlap against one training set: rows touched, pairs, the first few ``[eval id, train id, detail]``."""

    rows: int
    pairs: int
    first: list[list[str]]


@dataclass
class OverlapReport:
    """Overlaps of an evaluation set's rows with the rows of training sets.

    Attributes
    ----------
    evaluation
        The evaluation set's description and row count.
    n_rows
        Evaluation rows checked.
    contaminated
        Per kind (``OVERLAP_KINDS``): how many evaluation rows have at least
        one overlap of that kind with some training row.
    by_source
        Per training set, per kind: ``rows`` (evaluation rows touched),
        ``pairs`` (overlapping pairs) and ``first`` (up to 5 example pairs,
        ``[evaluation id, training id, detail]``).
    pairs
        Every overlapping pair (``OverlapPair``), in the order found: the
        list a user removes contaminated rows with.
    options
        The thresholds used.
    """

    evaluation: str
    n_rows: int
    contaminated: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, dict[str, KindOverlap]] = field(default_factory=dict)
    n_checked: dict[str, int] = field(default_factory=dict)
    options: dict[str, object] = field(default_factory=dict)
    pairs: list[OverlapPair] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True when no evaluation row overlaps any training row."""
        return not any(self.contaminated.values())

    @property
    def n_contaminated(self) -> int:
        """Evaluation rows with an overlap of any kind."""
        return int(self.contaminated.get("any", 0))

    @property
    def contaminated_ids(self) -> set[str]:
        """Ids of the evaluation rows that overlap some training row."""
        return {p["evaluation_id"] for p in self.pairs}

    def clean_rows(self, rows: Iterable[LabelledRow]) -> list[LabelledRow]:
        """The rows of the evaluation set that overlap no training row (the clean subset)."""
        dirty = self.contaminated_ids
        return [r for r in rows if r.id not in dirty]

    def to_json(self) -> dict[str, object]:
        return {"evaluation": self.evaluation, "n_rows": self.n_rows, "clean": self.clean,
                "contaminated_rows": self.contaminated, "training_rows_checked": self.n_checked,
                "by_source": self.by_source, "options": self.options, "pairs": self.pairs}


def overlap_report(evaluation: Sequence[LabelledRow], against: Iterable[tuple[str, Iterable[LabelledRow]]], *,
                   evaluation_name: str = "(rows)", options: OverlapOptions | None = None) -> OverlapReport:
    """Find every overlap of ``evaluation``'s rows with the rows of each training set in ``against``.

    Parameters
    ----------
    evaluation
        The rows whose cleanliness is in question (indexed once).
    against
        ``(name, rows)`` per training set; rows are streamed, so a large
        pool is read once.
    evaluation_name
        How the report names the evaluation set.
    options
        What counts as overlap (``OverlapOptions``' defaults otherwise).
    """
    index = OverlapIndex(evaluation, options)
    report = OverlapReport(evaluation_name, len(index), options=vars(index.options).copy())
    touched: dict[str, set[str]] = defaultdict(set)
    for name, rows in against:
        per_kind: dict[str, KindOverlap] = {}
        rows_touched: dict[str, set[str]] = defaultdict(set)
        n = 0
        for row in rows:
            n += 1
            for m in index.matches(row):
                entry = per_kind.setdefault(m.kind, {"rows": 0, "pairs": 0, "first": []})
                entry["pairs"] += 1
                rows_touched[m.kind].add(m.reference_id)
                touched[m.kind].add(m.reference_id)
                touched["any"].add(m.reference_id)
                if len(entry["first"]) < FIRST_IDS:
                    entry["first"].append([m.reference_id, row.id, m.detail])
                report.pairs.append({"evaluation_id": m.reference_id, "training_set": name, "training_id": row.id,
                                     "kind": m.kind, "shared": m.detail})
        for kind, ids in rows_touched.items():
            per_kind[kind]["rows"] = len(ids)
        report.by_source[name] = {k: per_kind[k] for k in OVERLAP_KINDS if k in per_kind}
        report.n_checked[name] = n
        log.info("overlap: %s against %s: %d rows checked, %d evaluation rows touched", evaluation_name, name, n,
                 len(set().union(*rows_touched.values())) if rows_touched else 0)
    report.contaminated = {k: len(touched.get(k, ())) for k in (*OVERLAP_KINDS, "any")}
    return report


def overlap_groups(rows: Sequence[LabelledRow], options: OverlapOptions | None = None) -> list[list[LabelledRow]]:
    """The rows of one set in groups that share no text across groups (connected components of overlap).

    Two rows are in one group when they share a row, a document, a claim, a
    long sentence or a near-duplicate document (``OverlapOptions``), directly
    or through other rows. Splitting a set by these groups gives splits that
    ``judgelab sets overlap`` finds clean of each other. Groups come in the
    order of their first row; rows keep their order within a group.
    """
    index = OverlapIndex(rows, options)
    position = {r.id: i for i, r in enumerate(rows)}
    if len(position) != len(rows):
        raise ValueError("overlap_groups: row ids are not unique; give every row its own id first")
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, row in enumerate(rows):
        for m in index.matches(row):
            a, b = root(i), root(position[m.reference_id])
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[LabelledRow]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(root(i), []).append(row)
    return list(groups.values())


class Exclusion:
    """Drops rows that overlap reference rows, and counts what it dropped, by set and by kind.

    Tuning builds one from its ``exclude`` sets and passes it to
    ``resolve_set``, which applies it to the rows a set reads *before* any
    generator (``d2c:``) makes rows from them.
    """

    def __init__(self, index: OverlapIndex) -> None:
        self.index = index
        self.dropped: dict[str, Counter[str]] = defaultdict(Counter)

    def keep(self, rows: Iterable[LabelledRow], where: str) -> list[LabelledRow]:
        """The rows of ``where`` that overlap no reference row; the others are counted under ``where``."""
        kept = []
        for row in rows:
            kind: OverlapKind | None = self.index.overlaps(row) if len(self.index) else None
            if kind is None:
                kept.append(row)
            else:
                self.dropped[where][kind] += 1
        if self.dropped.get(where):
            log.info("exclusion: %s: dropped %s", where, dict(self.dropped[where]))
        return kept

    def counts(self) -> dict[str, dict[str, int]]:
        """Per set: rows dropped by kind (and ``total``)."""
        return {where: {**dict(c), "total": sum(c.values())} for where, c in self.dropped.items()}
