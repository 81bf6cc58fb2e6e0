"""What changed in a row between two scored runs of one set: its label, documents, question, response.

Each record keeps ``content_hashes`` (``content_hashes(row)``): a short hash of
each part of the row the judge reads. ``row_changes(base, new)`` matches two
runs' records by id and names, per shared id, the parts that differ, so that a
drift gate can count relabelled rows instead of mistaking them for new ones.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judgelab.calibration.data._records import ScoreRecord
    from judgelab.calibration.data._rows import LabelledRow

__all__ = ["PARTS", "RowChanges", "content_hashes", "row_changes"]

# The parts of a row, as the gate reports them, and the row fields each covers.
PARTS: dict[str, tuple[str, ...]] = {
    "documents": ("documents",),
    "user text": ("user_text",),
    "response": ("response",),
    "other fields": ("task", "level", "labels", "generator", "split", "group", "meta"),
}


def _short_hash(value: object) -> str:
    payload = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def content_hashes(row: LabelledRow) -> dict[str, str]:
    """``{part: hash}`` of the row's documents, user text, response and other fields (not id, not label)."""
    data = row.model_dump(mode="json")
    return {part: _short_hash([data.get(f) for f in fields]) for part, fields in PARTS.items()}


@dataclass(frozen=True)
class RowChanges:
    """Two runs' records matched by row id.

    Attributes
    ----------
    shared
        Ids scored in both runs, in the new run's order.
    only_baseline, only_new
        Ids scored in one run only.
    changed
        ``{id: parts}`` for shared ids whose label or content differs;
        parts are ``"label"`` and the keys of ``PARTS``, or ``"content"``
        when the records carry only a whole-row hash.
    unchecked
        Shared ids whose content could not be compared (records written
        without any row hash); their labels are still compared.
    """

    shared: tuple[str, ...]
    only_baseline: tuple[str, ...]
    only_new: tuple[str, ...]
    changed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unchecked: int = 0

    @property
    def label_changed(self) -> list[str]:
        """Shared ids whose label differs, in order."""
        return [i for i in self.shared if "label" in self.changed.get(i, ())]

    def counts(self) -> dict[str, int]:
        """Rows changed per part (a row may count under several)."""
        c: Counter[str] = Counter(p for parts in self.changed.values() for p in parts)
        return {"label": c.get("label", 0), **{p: c.get(p, 0) for p in PARTS},
                **({"content": c["content"]} if c.get("content") else {})}

    def describe(self, limit: int = 10) -> str:
        """``"12 of 160 shared rows changed (labels 12, documents 0, ...): r1, r4, ... (+2 more)"``."""
        counts = self.counts()
        what = ", ".join(f"{'labels' if k == 'label' else k} {v}" for k, v in counts.items())
        ids = [i for i in self.shared if i in self.changed]
        text = f"{len(ids)} of {len(self.shared)} shared rows changed ({what})"
        if ids:
            text += ": " + _some(ids, limit)
        if self.unchecked:
            text += f"; the content of {self.unchecked} rows could not be compared (records without row hashes)"
        return text

    def to_dict(self) -> dict[str, object]:
        return {"shared": len(self.shared), "only_baseline": len(self.only_baseline), "only_new": len(self.only_new),
                "counts": self.counts(), "changed": {i: list(p) for i, p in self.changed.items()},
                "unchecked": self.unchecked}


def _some(ids: Sequence[str], limit: int) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" (+{len(ids) - limit} more)" if len(ids) > limit else "")


def _parts_changed(a: ScoreRecord, b: ScoreRecord) -> tuple[tuple[str, ...], bool]:
    """The parts that differ between two records of one id, and whether the content could be compared."""
    parts = ["label"] if a.label != b.label else []
    ha, hb = getattr(a, "content_hashes", None), getattr(b, "content_hashes", None)
    if ha and hb:
        parts += [p for p in PARTS if ha.get(p) != hb.get(p)]
        return tuple(parts), True
    if a.row_hash and b.row_hash:
        # a whole-row hash covers the label too: only a content change if the label is the same
        if a.row_hash != b.row_hash and a.label == b.label:
            parts.append("content")
        return tuple(parts), True
    return tuple(parts), False


def row_changes(baseline: Sequence[ScoreRecord], new: Sequence[ScoreRecord]) -> RowChanges:
    """Match two runs' records by id (the last record of an id wins) and name what changed in each."""
    base = {r.id: r for r in baseline}
    newr = {r.id: r for r in new}
    shared = tuple(i for i in newr if i in base)
    changed: dict[str, tuple[str, ...]] = {}
    unchecked = 0
    for i in shared:
        parts, checked = _parts_changed(base[i], newr[i])
        unchecked += not checked
        if parts:
            changed[i] = parts
    return RowChanges(
        shared=shared,
        only_baseline=tuple(i for i in base if i not in newr),
        only_new=tuple(i for i in newr if i not in base),
        changed=changed,
        unchecked=unchecked,
    )
