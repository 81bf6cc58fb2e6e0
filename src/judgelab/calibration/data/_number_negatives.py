"""Number negatives (``num:``): one figure of a supported claim changed to a plausible wrong value.

A figure is a number (``12``, ``1,500``, ``3.5``, ``20th``, with whatever
currency sign, percent or unit stands around it, which stays), a year, the
day or the month of a date, or a number word (``two`` .. ``twelve``). Only a
figure the document also states is changed (the edit then contradicts the
document rather than a paraphrase of it), and never to a value the document
or the claim states anywhere, so the edited claim is really unsupported.

The new value keeps the format and the magnitude: as many digits and
decimals, the same thousands separators, the same trailing zeros (``20``
becomes ``30``, not ``23``; ``1,500`` becomes ``1,700``), so that neither the
look of a number nor its roundness tells the twins apart. Years move by one
to five (a round year by ten or twenty), days stay in 1-28, percentages stay
at or under 100.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from judgelab.calibration.data._generated import document_text, edit_pairs, plain, replace_span
from judgelab.calibration.data._rows import LabelledRow

__all__ = ["number_pairs"]

GENERATOR = "num"

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")

_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(st|nd|rd|th)?(?![\w]|[.,]\d|:\d)")
_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + r")\b")
_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
_PERCENT_AFTER = re.compile(r"\s*(%|percent|per cent)")


@dataclass(frozen=True)
class _Figure:
    """A figure of the claim: where it is, what it says, and the values it could become."""

    start: int
    end: int
    text: str
    value: str
    candidates: tuple[tuple[str, str], ...]  # (new text, its value), nearest first
    kind: str  # number, percent, year, day, month or word


def _value(integer: str, decimals: str | None) -> str:
    """The value a number states, for comparison: ``1,500`` -> ``1500``, ``3.50`` -> ``3.5``."""
    number = float(integer.replace(",", "") + ("." + decimals if decimals else ""))
    return f"{number:g}" if number < 1e15 else integer.replace(",", "")


def stated_values(text: str) -> set[str]:
    """Every value ``text`` states: numbers (by value), month names and number words (lower case)."""
    text = plain(text)
    values = {_value(m.group(1), m.group(2)) for m in _NUMBER.finditer(text)}
    values |= {m.group(1).lower() for m in _MONTH.finditer(text)}
    for m in _WORD.finditer(text):
        values |= {m.group(1).lower(), str(NUMBER_WORDS.index(m.group(1).lower()) + 2)}
    return values


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _format(n: int, like_integer: str, decimals: str | None, suffix: str | None) -> str:
    """``n`` (all digits, decimals included) written like the original: separators, zero padding, decimals."""
    digits = str(n).zfill(len(like_integer.replace(",", "")) + len(decimals or ""))
    integer, frac = (digits[: -len(decimals)], digits[-len(decimals):]) if decimals else (digits, "")
    if "," in like_integer:
        integer = f"{int(integer):,}"
    text = integer + ("." + frac if decimals else "")
    return text + (_ordinal(int(integer.replace(",", ""))) if suffix else "")


def _near_values(n: int, *, year: bool, day: bool) -> list[int]:
    """Plausible wrong values for ``n``, nearest first: same digits, same trailing zeros."""
    if day:
        return sorted((d for d in range(1, 29) if d != n and abs(d - n) <= 6), key=lambda d: (abs(d - n), d))
    if year:
        steps = (10, 20, 30) if n % 10 == 0 else (1, 2, 3, 4, 5)
        return [y for s in steps for y in (n - s, n + s) if 1000 <= y <= 2030]
    zeros = len(str(n)) - len(str(n).rstrip("0"))
    m = n // 10**zeros
    return [c * 10**zeros for step in (1, 2, 3) for c in (m - step, m + step)
            if c > 0 and len(str(c)) == len(str(m)) and c % 10 != 0]


def _numbers(claim: str) -> list[_Figure]:
    figures = []
    for m in _NUMBER.finditer(claim):
        integer, decimals, suffix = m.group(1), m.group(2), m.group(3)
        digits = int(integer.replace(",", "") + (decimals or ""))
        if digits == 0:
            continue
        before, after = claim[max(0, m.start() - 12): m.start()], claim[m.end(): m.end() + 12]
        is_day = not decimals and digits <= 31 and bool(re.search(r"(" + "|".join(MONTHS) + r")\s+$", before)
                                                          or re.match(r"\s+(" + "|".join(MONTHS) + r")\b", after))
        is_year = not decimals and not suffix and "," not in integer and len(integer) == 4 and 1000 <= digits <= 2030
        percent = bool(_PERCENT_AFTER.match(after))
        scale = 10 ** len(decimals or "")
        cands = tuple((_format(new, integer, decimals, suffix), f"{new / scale:g}")
                      for new in _near_values(digits, year=is_year and not is_day,
                                              day=is_day)
                      if not (percent and new / scale > 100))
        kind = "day" if is_day else "year" if is_year else "percent" if percent else "number"
        figures.append(_Figure(m.start(), m.end(), m.group(0), _value(integer, decimals), cands, kind))
    return figures


def _months(claim: str) -> list[_Figure]:
    out = []
    for m in _MONTH.finditer(claim):
        i = MONTHS.index(m.group(1))
        cands = [(MONTHS[(i + s) % 12], MONTHS[(i + s) % 12].lower()) for step in (1, 2, 3) for s in (-step, step)]
        out.append(_Figure(m.start(), m.end(), m.group(0), m.group(1).lower(), tuple(cands), "month"))
    return out


def _words(claim: str) -> list[_Figure]:
    out = []
    for m in _WORD.finditer(claim):
        word = m.group(1)
        i = NUMBER_WORDS.index(word.lower())
        cands = []
        for step in (1, 2, 3):
            for j in (i - step, i + step):
                if 0 <= j < len(NUMBER_WORDS):
                    new = NUMBER_WORDS[j].capitalize() if word[0].isupper() else NUMBER_WORDS[j]
                    cands.append((new, NUMBER_WORDS[j]))
        out.append(_Figure(m.start(), m.end(), word, word.lower(), tuple(cands), "word"))
    return out


def _stated(figure: _Figure, values: set[str]) -> bool:
    """Whether the document states the figure's value (a number word counts as its digits too)."""
    if figure.value in values:
        return True
    return figure.value in NUMBER_WORDS and str(NUMBER_WORDS.index(figure.value) + 2) in values


def _edit(row: LabelledRow, rng: random.Random) -> tuple[str, dict[str, str]] | None:
    claim = row.response
    doc_values = stated_values(document_text(row))
    claim_values = stated_values(claim)
    figures = [f for f in (*_numbers(claim), *_months(claim), *_words(claim)) if _stated(f, doc_values)]
    rng.shuffle(figures)
    for figure in figures:
        fresh = [(t, v) for t, v in figure.candidates if v not in doc_values and v not in claim_values
                 and not (v in NUMBER_WORDS and str(NUMBER_WORDS.index(v) + 2) in doc_values)]
        if not fresh:
            continue
        nearest = fresh[: 2]
        text, _ = nearest[rng.randrange(len(nearest))]
        edited = replace_span(claim, figure.start, figure.end, text)
        return edited, {"from": figure.text, "to": text, "edit": figure.kind}
    return None


def number_pairs(rows: Sequence[LabelledRow]) -> list[LabelledRow]:
    """A supported twin and a number-edited negative for every consistent fact-check row with a figure to change.

    Returns
    -------
    list of LabelledRow
        Pairs in row order: ``num-ID-kept`` (label 1, the parent's claim)
        then ``num-ID-edited`` (label 0), both in the parent's unit;
        ``meta`` holds ``generator`` (``"num"``), ``parent``, ``from``, ``to``
        and ``edit`` (``number``, ``percent``, ``year``, ``day``, ``month`` or
        ``word``). Rows with no figure
        the document states, or no fresh value for it, make no pair.
    """
    return edit_pairs(rows, GENERATOR, _edit)
