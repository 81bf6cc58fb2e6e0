"""Deletion negatives: a supported claim becomes unsupported when the sentences that support it are deleted.

MiniCheck's D2C idea without a model: for each consistent fact-check row, the
document sentences that share the claim's content words are found greedily
(most new content words first) until they cover ``cover`` of the claim's
content words the document holds. The *negative* is the document without
them; the *positive* is the document without the same number of sentences
that share no content word with the claim. Both keep the claim as it is, so a
claim-only judge is at chance by construction, and both lose the same number
of sentences, so the document's length says nothing about the label.

A row is left out (no pair) when its support cannot be deleted cleanly: the
remaining document would still hold more than ``max_left`` of the claim's
content words, fewer than ``min_left`` sentences would be left, or there are
not enough unrelated sentences to delete from the positive.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from judgelab.calibration.data._rows import LabelledRow
from judgelab.evaluators import content_words, split_sentences

__all__ = ["deletion_pairs"]


def _support(claim_words: set[str], sentence_words: list[set[str]], cover: float) -> list[int] | None:
    """Indices of the sentences that cover ``cover`` of the claim's words the document holds (greedy)."""
    present = claim_words & set().union(*sentence_words) if sentence_words else set()
    if len(present) < 2:
        return None
    chosen: list[int] = []
    covered: set[str] = set()
    while len(covered) < cover * len(present):
        gains = [(len((w & present) - covered), -i) for i, w in enumerate(sentence_words) if i not in chosen]
        gain, neg_i = max(gains)
        if gain == 0:
            break
        chosen.append(-neg_i)
        covered |= sentence_words[-neg_i] & present
    return sorted(chosen)


def _pair(row: LabelledRow, *, cover: float, max_left: float, min_left: int) -> tuple[LabelledRow, LabelledRow] | None:
    if row.label != 1 or row.task != "fact-check" or len(row.documents) != 1:
        return None
    sentences = split_sentences(row.documents[0])
    claim_words = content_words(row.response)
    words = [content_words(s) for s in sentences]
    support = _support(claim_words, words, cover)
    if not support or len(sentences) - len(support) < min_left:
        return None
    kept = [s for i, s in enumerate(sentences) if i not in support]
    left = claim_words & set().union(*(words[i] for i in range(len(sentences)) if i not in support))
    if len(left) > max_left * len(claim_words):
        return None
    unrelated = [i for i, w in enumerate(words) if i not in support and not (w & claim_words)]
    if len(unrelated) < len(support):
        return None
    # delete the unrelated sentences farthest from the support, so the positive keeps its evidence's context
    centre = sum(support) / len(support)
    dropped = set(sorted(unrelated, key=lambda i: (-abs(i - centre), i))[: len(support)])
    positive_doc = "".join(s for i, s in enumerate(sentences) if i not in dropped).strip()
    negative_doc = "".join(kept).strip()
    key = hashlib.sha256((row.documents[0] + "\x00" + row.response).encode("utf-8")).hexdigest()[:16]
    base = row.model_dump(exclude_none=True)
    # the pair keeps its parent's unit: a split or a bootstrap that holds the parent out holds its pair out too
    meta = {**row.meta, "pair": row.unit, "d2c_source": row.id, "d2c_key": key}
    positive = LabelledRow(**{**base, "id": f"d2c-{row.id}-kept", "documents": [positive_doc], "label": 1,
                              "meta": {**meta, "deleted": [sentences[i].strip() for i in sorted(dropped)]}})
    negative = LabelledRow(**{**base, "id": f"d2c-{row.id}-deleted", "documents": [negative_doc], "label": 0,
                              "meta": {**meta, "deleted": [sentences[i].strip() for i in support]}})
    return positive, negative


def deletion_pairs(
    rows: Sequence[LabelledRow], *, cover: float = 0.8, max_left: float = 0.34, min_left: int = 2
) -> list[LabelledRow]:
    """A positive and a negative row for every consistent fact-check row whose support can be deleted.

    Parameters
    ----------
    rows
        Labelled rows; only fact-check rows with label 1 and one document
        are used.
    cover
        Share of the claim's content words (those the document holds) that
        the deleted sentences must cover.
    max_left
        Largest share of the claim's content words the negative's document
        may still hold; rows above it are left out.
    min_left
        Fewest sentences a document may keep.

    Returns
    -------
    list of LabelledRow
        Pairs in row order: ``d2c-ID-kept`` (label 1) then ``d2c-ID-deleted``
        (label 0), both in their parent's unit (``meta["pair"]`` is the
        parent's ``unit``); ``meta["deleted"]`` lists the sentences each lost.
    """
    out: list[LabelledRow] = []
    for row in rows:
        pair = _pair(row, cover=cover, max_left=max_left, min_left=min_left)
        if pair is not None:
            out.extend(pair)
    return out
