"""The one dev/test split of a bench set, shared by every judge, so that every comparison is paired.

A set whose rows carry both ``split`` values keeps them. Otherwise rows are split by unit
(``LabelledRow.unit``: rows that share ``meta["pair"]`` stay on one side), half the units of each
kind (all-supported, all-unsupported, mixed) to each side, in an order seeded by the bench's seed
and the unit's name alone: adding a judge, or scoring more rows of another set, moves no row.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from judgelab.calibration.data import LabelledRow

__all__ = ["Side", "bench_split"]

Side = Literal["dev", "test"]


def _order_key(unit: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}\x00{unit}".encode()).hexdigest()


def bench_split(rows: Sequence[LabelledRow], *, seed: int = 0) -> dict[str, Side]:
    """``{row id: "dev" | "test"}`` for one task's rows of a set.

    The threshold is tuned on ``dev`` and every figure of the leaderboard is measured on ``test``.
    """
    if any(r.split == "dev" for r in rows) and any(r.split == "test" for r in rows):
        return {r.id: ("dev" if r.split == "dev" else "test") for r in rows}
    labels_of: dict[str, set[int]] = defaultdict(set)
    for r in rows:
        labels_of[r.unit].add(int(r.label))
    kinds: dict[tuple[int, ...], list[str]] = defaultdict(list)
    for unit, labels in labels_of.items():
        kinds[tuple(sorted(labels))].append(unit)
    side_of: dict[str, Side] = {}
    for units in kinds.values():
        for i, unit in enumerate(sorted(units, key=lambda u: _order_key(u, seed))):
            side_of[unit] = "dev" if i % 2 == 0 else "test"
    return {r.id: side_of[r.unit] for r in rows}
