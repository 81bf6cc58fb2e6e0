"""Partial negatives (``partial:``): a supported claim joined to a clause its document does not support.

WiCE's hard class is the partially supported claim: most of it holds, one part
does not. The negative joins the row's claim to a *foreign clause*: a supported
claim of another unit of the same set whose content words the document
(almost) does not hold (at most ``max_held`` of them), so the added part is a
real, fluent claim about something else.

The positive twin is joined the same way (``twin="joined"``, the default): the
row's claim and another supported claim of the same document, so both twins
have the same shape (two clauses and ", and") and about the same length (the
foreign clause is drawn within ``length_ratio`` of the sibling's length), and
neither a claim-only model nor the claim's length can tell them apart. A row
whose document has no other supported claim then makes no pair.
``twin="original"`` keeps the parent's claim alone as the positive, as the
other generators do; its negatives are longer and contain "and" (a shortcut
``shortcut_baselines`` shows). Claims of several sentences, or FIB's ``<t>``
tags, are not joined.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from judgelab.calibration.data._generated import document_text, editable, make_pair, plain, row_random
from judgelab.calibration.data._rows import LabelledRow
from judgelab.errors import check_parameter
from judgelab.evaluators import content_words, split_sentences

__all__ = ["partial_pairs"]

GENERATOR = "partial"

#: Random draws of a foreign clause per row before the row is given up.
DRAWS = 64


@dataclass(frozen=True)
class _Clause:
    unit: str
    text: str
    words: frozenset[str]
    length: int


def _clause(text: str) -> str | None:
    """``text`` as a clause to join (its end punctuation dropped), or None when it is not one sentence of 4-30
    words."""
    text = " ".join(text.split())
    if "<t>" in text or len(split_sentences(text)) != 1 or not 4 <= len(text.split()) <= 30:
        return None
    return text.rstrip(" .!?;,")


def _lower_first(clause: str) -> str:
    """The clause as the second half of a sentence: a leading stop word ("The", "It") lower-cased, a name kept."""
    first = clause.split()[0]
    return clause[0].lower() + clause[1:] if not content_words(first) and first != "I" else clause


def _join(first: str, second: str) -> str:
    return f"{first}, and {_lower_first(second)}."


def partial_pairs(rows: Sequence[LabelledRow], *, twin: Literal["joined", "original"] = "joined",
                  max_held: float = 0.2, length_ratio: float = 0.3) -> list[LabelledRow]:
    """A supported twin and a partially supported negative for every consistent fact-check row that allows one.

    Parameters
    ----------
    rows
        The set; its consistent fact-check rows are both the claims joined and
        the pool of foreign clauses.
    twin
        ``"joined"``: the positive is the claim joined to another supported
        claim of the same document; ``"original"``: the parent's claim alone.
    max_held
        Largest share of the foreign clause's content words the document may hold.
    length_ratio
        With ``twin="joined"``, how far the foreign clause's length (in
        words) may be from the sibling clause's, as a share of it.

    Returns
    -------
    list of LabelledRow
        Pairs in row order: ``partial-ID-kept`` (label 1) then
        ``partial-ID-edited`` (label 0), both in the parent's unit; ``meta``
        holds ``generator`` (``"partial"``), ``parent``, ``clause`` (the
        foreign clause), ``clause_from`` (the id of the row it came from),
        ``twin`` and, when joined, ``sibling`` (the supported clause added
        to the positive).
    """
    check_parameter(twin in ("joined", "original"), "twin", "partial_pairs", "'joined' or 'original'", twin)
    check_parameter(0.0 <= max_held < 1.0, "max_held", "partial_pairs", "a float in [0, 1)", max_held)
    usable = [(r, c) for r in rows if editable(r) and (c := _clause(r.response)) is not None]
    pool = [_Clause(r.unit, c, frozenset(content_words(c)), len(c.split())) for r, c in usable]
    ids = [r.id for r, _ in usable]
    by_document: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for r, c in usable:
        by_document[tuple(r.documents)].append(c)
    out: list[LabelledRow] = []
    for row, claim in usable:
        rng = row_random(GENERATOR, row)
        sibling = None
        if twin == "joined":
            siblings = sorted({c for c in by_document[tuple(row.documents)]
                               if c.lower() not in claim.lower() and claim.lower() not in c.lower()})
            if not siblings:
                continue
            sibling = siblings[rng.randrange(len(siblings))]
        held = content_words(plain(document_text(row)))
        found = _foreign(pool, row.unit, {claim, sibling or ""}, held, rng, max_held=max_held,
                         length=len(sibling.split()) if sibling else None, ratio=length_ratio)
        if found is None:
            continue
        clause = pool[found]
        edit = {"clause": clause.text, "clause_from": ids[found], "twin": twin}
        if sibling is not None:
            edit["sibling"] = sibling
        out.extend(make_pair(row, GENERATOR, edited=_join(claim, clause.text), edit=edit,
                             supported=_join(claim, sibling) if sibling is not None else None))
    return out


def _foreign(pool: Sequence[_Clause], unit: str, taken: set[str], held: set[str], rng: random.Random, *,
             max_held: float, length: int | None, ratio: float) -> int | None:
    """The index of a clause of another unit that the document does not hold (seeded draws), or None."""
    if not pool:
        return None
    for _ in range(DRAWS):
        i = rng.randrange(len(pool))
        c = pool[i]
        if c.unit == unit or c.text in taken or len(c.words) < 3:
            continue
        if len(c.words & held) > max_held * len(c.words):
            continue
        if length is not None and abs(c.length - length) > ratio * length:
            continue
        return i
    return None
