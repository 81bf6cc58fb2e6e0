"""Swap negatives (``swap:``): an entity or a direction word of a supported claim swapped.

Two edits, one per pair, chosen by the row's seeded draw among those the row allows:

- ``entity``: a name of the claim (a run of capitalised words the document
  also holds) swapped for another name of the same document, of as many
  words, that shares no word with the claim: the sentence still reads as one
  about the document, and only reading who did what tells the twins apart;
- ``direction``: a direction word (rose/fell, increased/decreased,
  before/after, more/less, higher/lower, won/lost, ...) swapped for its
  opposite, when the document holds the word and not its opposite.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from judgelab.calibration.data._generated import document_text, edit_pairs, plain, replace_span
from judgelab.calibration.data._number_negatives import MONTHS
from judgelab.calibration.data._rows import LabelledRow
from judgelab.evaluators import content_words

__all__ = ["swap_pairs", "DIRECTION_WORDS"]

GENERATOR = "swap"

_PAIRS = (
    ("rose", "fell"), ("rise", "fall"), ("rises", "falls"), ("rising", "falling"), ("risen", "fallen"),
    ("increased", "decreased"), ("increase", "decrease"), ("increases", "decreases"), ("increasing", "decreasing"),
    ("before", "after"), ("more", "less"), ("higher", "lower"), ("highest", "lowest"), ("won", "lost"),
    ("win", "lose"), ("wins", "loses"), ("winning", "losing"), ("above", "below"), ("larger", "smaller"),
    ("largest", "smallest"), ("earlier", "later"), ("earliest", "latest"), ("older", "younger"),
    ("oldest", "youngest"), ("longer", "shorter"), ("longest", "shortest"), ("maximum", "minimum"),
    ("gained", "dropped"), ("north", "south"), ("east", "west"), ("northern", "southern"),
    ("eastern", "western"), ("best", "worst"), ("better", "worse"), ("positive", "negative"),
    ("majority", "minority"), ("inside", "outside"), ("import", "export"), ("imports", "exports"),
    ("buy", "sell"), ("bought", "sold"), ("accepted", "rejected"), ("approved", "rejected"),
    ("supported", "opposed"), ("expanded", "reduced"), ("strengthened", "weakened"),
)


def _both_ways(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for a, b in pairs:
        out.setdefault(a, b)
        out.setdefault(b, a)
    return out


#: Every direction word and its opposite (both ways).
DIRECTION_WORDS: dict[str, str] = _both_ways(_PAIRS)

_WORD = re.compile(r"\b[A-Za-z]+\b")
_NAME = re.compile(r"\b[A-Z][\w'’.-]*[\w](?:\s+[A-Z][\w'’.-]*[\w])*")
_CALENDAR = {*MONTHS, "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}


def names(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, name)`` of every run of capitalised words in ``text``, leading stop words and calendar
    words dropped."""
    out = []
    for m in _NAME.finditer(text):
        words = [(m.start() + w.start(), m.start() + w.end(), w.group(0)) for w in re.finditer(r"\S+", m.group(0))]
        while words and (not content_words(words[0][2]) or words[0][2] in _CALENDAR):
            words = words[1:]
        while words and words[-1][2] in _CALENDAR:
            words = words[:-1]
        if words:
            out.append((words[0][0], words[-1][1], text[words[0][0]:words[-1][1]]))
    return out


def _entity_edits(claim: str, document: str) -> list[tuple[int, int, str, list[str]]]:
    claim_words = set(claim.split()) | {w.lower() for w in _WORD.findall(claim)}
    lower = set(re.findall(r"\b[a-z]+\b", document))
    # a one-word "name" the document also writes in lower case is a common word that opened a sentence
    in_doc = {n for _, _, n in names(document) if " " in n or n.lower() not in lower}
    edits = []
    for start, end, name in names(claim):
        if name not in document:
            continue
        size = len(name.split())
        others = sorted(n for n in in_doc if len(n.split()) == size and n != name and n not in claim
                        and not any(w in claim_words or w.lower() in claim_words for w in _WORD.findall(n)))
        if others:
            edits.append((start, end, name, others))
    return edits


def _direction_edits(claim: str, document: str) -> list[tuple[int, int, str, list[str]]]:
    doc_words = {w.lower() for w in _WORD.findall(document)}
    edits = []
    for m in _WORD.finditer(claim):
        word = m.group(0)
        opposite = DIRECTION_WORDS.get(word.lower())
        if opposite is None or word.lower() not in doc_words or opposite in doc_words:
            continue
        new = opposite.capitalize() if word[0].isupper() else opposite
        edits.append((m.start(), m.end(), word, [new]))
    return edits


def _edit(row: LabelledRow, rng: random.Random) -> tuple[str, dict[str, str]] | None:
    claim, document = row.response, plain(document_text(row))
    edits = [("entity", e) for e in _entity_edits(claim, document)]
    edits += [("direction", e) for e in _direction_edits(claim, document)]
    if not edits:
        return None
    kind, (start, end, old, news) = edits[rng.randrange(len(edits))]
    new = news[rng.randrange(len(news))]
    return replace_span(claim, start, end, new), {"from": old, "to": new, "edit": kind}


def swap_pairs(rows: Sequence[LabelledRow]) -> list[LabelledRow]:
    """A supported twin and an entity- or direction-swapped negative for every consistent fact-check row that has one.

    Returns
    -------
    list of LabelledRow
        Pairs in row order: ``swap-ID-kept`` (label 1, the parent's claim)
        then ``swap-ID-edited`` (label 0), both in the parent's unit;
        ``meta`` holds ``generator`` (``"swap"``), ``parent``, ``from``,
        ``to`` and ``edit`` (``entity`` or ``direction``). Rows with neither
        edit make no pair.
    """
    return edit_pairs(rows, GENERATOR, _edit)
