"""What every hard-negative generator shares: which rows it edits, its seeded choices, and the pair it writes.

A generator (``num:``, ``swap:``, ``partial:``, like ``d2c:``) is a pure
function of rows: from every consistent (label 1) fact-check row it can edit
cleanly it makes a *pair*, a supported twin (label 1) and an edited claim the
document does not support (label 0), over the parent's documents. Both rows
carry the parent's unit (``meta["pair"]``), so a split or a bootstrap that
holds the parent out holds its pair out too, and ``meta`` says what was
edited: ``{"generator": "num", "parent": ID, "from": "12", "to": "15"}``.
Every choice is drawn from a generator seeded by a hash of the row's text, so
the same rows give the same pairs in any order and on any machine.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable, Mapping

from judgelab.calibration.data._rows import LabelledRow

__all__ = ["editable", "row_random", "make_pair", "edit_pairs", "replace_span", "document_text", "plain", "generated_from"]

_TAGS = re.compile(r"</?t>")


def editable(row: LabelledRow) -> bool:
    """Whether a generator may edit ``row``: a consistent fact-check row with a document and a claim."""
    return row.label == 1 and row.task == "fact-check" and bool(row.documents) and bool(row.response.strip())


def document_text(row: LabelledRow) -> str:
    """The row's documents as one text (what the edited claim must not be supported by)."""
    return "\n\n".join(row.documents)


def row_random(generator: str, row: LabelledRow) -> random.Random:
    """A random generator fixed by the generator's name and the row's documents and claim alone."""
    text = "\x00".join([generator, *row.documents, row.response])
    return random.Random(int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], 16))


def replace_span(text: str, start: int, end: int, new: str) -> str:
    """``text`` with ``text[start:end]`` replaced by ``new``."""
    return text[:start] + new + text[end:]


def make_pair(row: LabelledRow, generator: str, *, edited: str, edit: Mapping[str, object],
              supported: str | None = None) -> tuple[LabelledRow, LabelledRow]:
    """The supported twin (label 1) and the edited row (label 0) of ``row``, in its unit.

    Parameters
    ----------
    row
        The parent (a consistent fact-check row).
    generator
        The generator's prefix (``num``, ``swap``, ``partial``), the ids' first part.
    edited
        The claim of the negative.
    edit
        What was edited, merged into both rows' ``meta`` (``from``, ``to``, ...).
    supported
        The claim of the positive (the parent's claim when None).
    """
    base = row.model_dump(exclude_none=True)
    meta = {**row.meta, "pair": row.unit, "generator": generator, "parent": row.id, **edit}
    positive = LabelledRow(**{**base, "id": f"{generator}-{row.id}-kept", "label": 1,
                              "response": row.response if supported is None else supported, "meta": meta})
    negative = LabelledRow(**{**base, "id": f"{generator}-{row.id}-edited", "label": 0, "response": edited,
                              "meta": meta})
    return positive, negative


def edit_pairs(rows: Iterable[LabelledRow], generator: str,
               edit: Callable[[LabelledRow, random.Random], tuple[str, Mapping[str, object]] | None]) -> list[LabelledRow]:
    """The pairs of every editable row that ``edit`` (a claim edit drawn from the row's own seed) can change."""
    out: list[LabelledRow] = []
    for row in rows:
        if not editable(row):
            continue
        found = edit(row, row_random(generator, row))
        if found is not None:
            edited, what = found
            out.extend(make_pair(row, generator, edited=edited, edit=what))
    return out


def plain(text: str) -> str:
    """``text`` without FIB's ``<t>`` sentence tags (for looking words up, never for writing)."""
    return _TAGS.sub(" ", text)


def generated_from(row: LabelledRow) -> tuple[str, str] | None:
    """``(generator, parent id)`` of a generated row, or None for a row read from a set.

    Reads ``meta["generator"]``/``meta["parent"]`` and, for deletion pairs (whose meta is kept as it was, so
    their rows' hashes and saved scores stay valid), ``meta["d2c_source"]``.
    """
    if "generator" in row.meta and "parent" in row.meta:
        return str(row.meta["generator"]), str(row.meta["parent"])
    if "d2c_source" in row.meta:
        return "d2c", str(row.meta["d2c_source"])
    return None
