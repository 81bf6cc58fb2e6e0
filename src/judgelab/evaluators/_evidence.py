"""Choosing a claim's evidence in a long document: content words and the best windows of sentences.

Used by the fact-checking evaluator's sentence-level decomposition and by the
deletion negatives of calibration's data, so that both find "the sentences
that support a claim" the same way: by overlap of content words (lower-cased
words of three or more letters that are not stop words, and every number).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judgelab.evaluators._chunking import split_sentences

__all__ = ["content_words", "evidence_windows", "EvidenceWindow"]

_WORD = re.compile(r"[A-Za-z\u00C0-\u024F]+|\d+(?:[.,]\d+)*")
_STOP = frozenset(
    "the and for are but not you all any can had her was one our out his has have how its may new now "
    "who did get him let she too use that with this from they will would there their what about which when "
    "were been into than then them these some could other also more most such only over very just after "
    "before while where being does each both those your said says".split()
)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry content: numbers, and words of 3+ letters that are not stop words."""
    words = set()
    for w in _WORD.findall(text.lower()):
        if w[0].isdigit() or (len(w) >= 3 and w not in _STOP):
            words.add(w)
    return words


@dataclass(frozen=True)
class EvidenceWindow:
    """``size`` consecutive sentences of a document, from ``start``, and their overlap with a claim."""

    start: int
    size: int
    text: str
    overlap: float


def evidence_windows(claim: str, document: str, *, window: int = 3, top: int = 3) -> list[EvidenceWindow]:
    """The ``top`` windows of ``window`` consecutive document sentences sharing most content words with ``claim``.

    Overlap is the share of the claim's content words found in the window.
    Windows are returned best first (ties: earlier first); a document of at
    most ``window`` sentences is one window.
    """
    sentences = split_sentences(document) or [document]
    wanted = content_words(claim)
    size = min(window, len(sentences))
    scored = []
    for start in range(0, len(sentences) - size + 1):
        text = "".join(sentences[start:start + size]).strip()
        found = len(wanted & content_words(text)) / len(wanted) if wanted else 0.0
        scored.append(EvidenceWindow(start, size, text, found))
    scored.sort(key=lambda w: (-w.overlap, w.start))
    return scored[:top]
