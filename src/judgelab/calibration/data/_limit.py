"""``--limit N``: N rows taken as whole units spread over the set (seeded, both labels), never the first N.

The first N rows of a set are often one unit (SummEdits lists the edits of one
summary together): every bootstrap interval over them collapses to a point.
``spread_limit`` visits the units in a seeded order that alternates the labels
and takes a unit whole when it fits; a unit larger than its share
(``max(1, N // SPREAD_UNITS)`` rows) gives that many of its rows, both labels
when it has them. The rows keep their set order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import zip_longest

from judgelab.calibration.data._rows import LabelledRow

__all__ = ["SPREAD_UNITS", "spread_limit"]

#: The number of units ``spread_limit`` aims for: the analysis flags intervals from fewer units
#: (``judgelab.calibration.MIN_INTERVAL_UNITS``; a test holds the two equal).
SPREAD_UNITS = 10


def _unit_label(rows: Sequence[LabelledRow]) -> int:
    """A unit's label for alternating: 1 or 0 when all its rows agree, 2 when it has both."""
    labels = {r.label for r in rows}
    return next(iter(labels)) if len(labels) == 1 else 2


def _interleave(groups: Sequence[list[str]]) -> list[str]:
    return [u for batch in zip_longest(*groups) for u in batch if u is not None]


def _take(rows: list[LabelledRow], n: int, rng: random.Random) -> list[LabelledRow]:
    """``n`` of a unit's rows, alternating its labels (seeded)."""
    if n >= len(rows):
        return rows
    by_label: dict[int, list[LabelledRow]] = {}
    for r in rng.sample(rows, len(rows)):
        by_label.setdefault(r.label, []).append(r)
    return [r for batch in zip_longest(*by_label.values()) for r in batch if r is not None][:n]


def spread_limit(rows: Sequence[LabelledRow], limit: int, *, seed: int | None = 0) -> list[LabelledRow]:
    """At most ``limit`` of ``rows``: whole units spread over the set, in set order.

    Parameters
    ----------
    rows
        One task's rows, in set order.
    limit
        How many rows to keep (all of them when the set has no more).
    seed
        Seeds the order in which units are visited (``None`` counts as 0, so
        a limited run picks the same rows every time).
    """
    if limit >= len(rows):
        return list(rows)
    units: dict[str, list[LabelledRow]] = {}
    for r in rows:
        units.setdefault(r.unit, []).append(r)
    rng = random.Random(0 if seed is None else seed)
    names = list(units)
    rng.shuffle(names)
    by_label: dict[int, list[str]] = {}
    for name in names:
        by_label.setdefault(_unit_label(units[name]), []).append(name)
    order = _interleave([by_label[k] for k in sorted(by_label)])
    share = max(1, limit // SPREAD_UNITS)
    chosen: set[int] = set()
    left = limit
    for name in order:
        if left <= 0:
            break
        members = units[name]
        n = len(members) if len(members) <= min(share, left) else min(share, left)
        taken = _take(members, n, rng)
        chosen.update(id(r) for r in taken)
        left -= len(taken)
    if left > 0:  # every unit gave its share: fill from the rows not taken, in set order
        for r in rows:
            if left <= 0:
                break
            if id(r) not in chosen:
                chosen.add(id(r))
                left -= 1
    return [r for r in rows if id(r) in chosen]
