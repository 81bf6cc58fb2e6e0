"""Sentence rows: one claim sentence against the evidence window that sentence-level decomposition gives it.

``fact-checking-sentences`` asks the judge about each claim sentence against
each of its ``top`` windows of ``window`` document sentences (one prompt per
window) and keeps the best window's score. A judge trained on whole claims
against chunks is never asked that question in training; these rows are it.
The windows come from the evaluator's own plan (``plan_checks`` with the
registered evaluator's default ``window`` and ``top``), so a row is exactly one
prompt that decomposition sends.

One row per sentence, holding its *best* window (the plan's first: most of
the sentence's content words). Not the top windows joined: the evaluator never
shows a sentence several windows at once, it scores each alone and takes the
maximum. The best window is the one that holds the support of a supported
sentence, and for an unsupported sentence the one most likely to win that
maximum: the hardest negative. Windows are not cut into chunks here; a window
over a judge's chunk budget is cut by the evaluator that renders the row, as
decomposition cuts it.

Labels, from what is known of the parent row:

- a supported parent (label 1): every sentence is supported (1);
- a deletion negative (``d2c:``: ``meta["d2c_source"]`` and ``meta["deleted"]``):
  a sentence that shares no content word with the deleted sentences kept its
  support (1); one that lost words to the deletion and keeps at most
  ``max_left`` of its content words in the document lost its support (0); any
  other is ambiguous and skipped;
- an edited negative (a hard-negative generator): the one sentence that holds
  the edited text (``EDIT_FIELDS``, first present) is 0; the others are not
  emitted (the supported twin gives them), nor is a row whose edit is in no
  sentence or in several;
- any other unsupported parent of one sentence: that sentence (0); of several
  sentences: skipped (which one is wrong is not known).

A sentence with no content word in common with its best window is skipped
whatever its label (the plan could not locate it, so its window is arbitrary).
Every row keeps its parent's unit (``meta["pair"]``), so held-out splits, the
bootstrap and contamination exclusion treat it as they treat its parent.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence

from judgelab.calibration.data._rows import LabelledRow
from judgelab.evaluators import content_words, evaluator_config, plan_checks

__all__ = ["EDIT_FIELDS", "sentence_rows"]

#: The evaluator whose plan the rows follow.
DECOMPOSING_EVALUATOR = "fact-checking-sentences"

#: Fields of ``meta`` that name the edited text of a hard negative, in the order they are read: the whole
#: claim sentence that holds the edit, or the edited text itself (the new figure, entity or clause).
EDIT_FIELDS = ("edited_sentence", "edited", "to")


def _default_plan() -> tuple[int, int]:
    config = evaluator_config(DECOMPOSING_EVALUATOR)
    assert config is not None and config.decomposition is not None, "fact-checking-sentences decomposes"
    return config.decomposition


def _edited_text(meta: Mapping[str, object]) -> str | None:
    for key in EDIT_FIELDS:
        value = meta.get(key)
        if value is not None and str(value).strip():
            return str(value).strip()
    return None


def _holds(sentence: str, text: str) -> bool:
    """Whether ``text`` occurs in ``sentence`` as whole words (``1`` is not found in ``10``)."""
    left = r"(?<!\w)" if text[0].isalnum() else ""
    right = r"(?!\w)" if text[-1].isalnum() else ""
    return re.search(left + re.escape(text) + right, sentence) is not None


def _labels(row: LabelledRow, sentences: Sequence[str], document: str, max_left: float) -> dict[int, tuple[int, str]]:
    """Per sentence index: (label, rule); sentences left out are absent."""
    if row.label == 1:
        return {i: (1, "supported-parent") for i in range(len(sentences))}
    edited = _edited_text(row.meta)
    if edited is not None:
        holding = [i for i, s in enumerate(sentences) if _holds(s, edited)]
        return {holding[0]: (0, "edited")} if len(holding) == 1 else {}
    deleted = row.meta.get("deleted")
    if row.meta.get("d2c_source") is not None and isinstance(deleted, list):
        lost_words = set().union(*(content_words(str(s)) for s in deleted)) if deleted else set()
        left_words = content_words(document)
        out: dict[int, tuple[int, str]] = {}
        for i, sentence in enumerate(sentences):
            words = content_words(sentence)
            touched = words & lost_words
            if not touched:
                out[i] = (1, "support-kept")
            elif touched - left_words and len(words & left_words) <= max_left * len(words):
                out[i] = (0, "support-deleted")
        return out
    return {0: (0, "one-sentence-negative")} if len(sentences) == 1 else {}


def _rows_of(row: LabelledRow, *, window: int, top: int, max_left: float) -> list[LabelledRow]:
    if row.task != "fact-check":
        return []
    request = row.to_request()
    # the document as FactCheckingEvaluator.template_values joins it
    document = "\n\n".join(request.documents_text) if request.documents_text else request.user_text
    if not document.strip() or not row.response.strip():
        return []
    plan = plan_checks(row.response, document, window=window, top=top, max_tokens=sys.maxsize, count=len)
    labels = _labels(row, plan.sentences, document, max_left)
    base = row.model_dump(exclude_none=True, exclude={"labels", "level"})
    out = []
    for i, sentence in enumerate(plan.sentences):
        if i not in labels:
            continue
        best = next(c for c in plan.checks if c.sentence_index == i)  # the plan lists a sentence's windows best first
        words = content_words(sentence)
        shared = words & content_words(best.evidence)
        if not shared:
            continue
        label, rule = labels[i]
        meta = {**row.meta, "pair": row.unit, "sent_source": row.id, "sent_rule": rule, "sentence_index": i,
                "sentences": len(plan.sentences), "window_start": best.window_start,
                "window_overlap": round(len(shared) / len(words), 4)}
        out.append(LabelledRow(**{**base, "id": f"sent-{row.id}-{i}", "user_text": "", "documents": [best.evidence],
                                  "response": sentence, "label": label, "meta": meta}))
    return out


def sentence_rows(rows: Sequence[LabelledRow], *, window: int | None = None, top: int | None = None,
                  max_left: float = 0.34) -> list[LabelledRow]:
    """Rows of one claim sentence against its best evidence window, for every fact-check row that tells its label.

    Parameters
    ----------
    rows
        Labelled rows; only fact-check rows are read (any set, including
        ``d2c:`` rows and hard negatives that name their edit in ``meta``).
    window, top
        The decomposition's window length and windows per sentence; default
        (``None``): the registered ``fact-checking-sentences`` evaluator's.
    max_left
        Largest share of a sentence's content words a deletion negative's
        document may still hold for the sentence to count as unsupported (the
        share ``deletion_pairs`` allows a whole claim).

    Returns
    -------
    list of LabelledRow
        In row order, then sentence order: ``sent-ID-I`` (sentence ``I`` of
        row ``ID``), ``documents`` the window, ``response`` the sentence,
        ``meta`` the parent's plus ``pair`` (the parent's unit),
        ``sent_source``, ``sent_rule`` (why the label), ``sentence_index``,
        ``sentences``, ``window_start`` and ``window_overlap``.
    """
    default_window, default_top = _default_plan()
    window = default_window if window is None else window
    top = default_top if top is None else top
    out: list[LabelledRow] = []
    for row in rows:
        out.extend(_rows_of(row, window=window, top=top, max_left=max_left))
    return out
