"""Splitting a long document into chunks that fit the judge's context.

As MiniCheck does, a document is split on sentence boundaries and sentences
are packed greedily into chunks of at most ``max_tokens`` tokens; a sentence
longer than that is cut on word boundaries. Each chunk is judged on its own
and the claim's score is the best chunk's (a claim is supported if some part
of the document supports it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from judgelab.errors import ParameterError

__all__ = ["split_sentences", "chunk_text"]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"')\]]*\s+|\n\s*\n|\n(?=\s*[-*•\d])")


def split_sentences(text: str) -> list[str]:
    """Sentences (and paragraph breaks) of ``text``, whitespace kept on the left piece."""
    pieces, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if text[start:end].strip():
            pieces.append(text[start:end])
        start = end
    if text[start:].strip():
        pieces.append(text[start:])
    return pieces


def _cut_long(sentence: str, max_tokens: int, count: Callable[[str], int]) -> list[str]:
    words = re.findall(r"\S+\s*", sentence)
    out, current = [], ""
    for word in words:
        if current and count(current + word) > max_tokens:
            out.append(current)
            current = ""
        current += word
    if current:
        out.append(current)
    return out


def chunk_text(text: str, max_tokens: int, count: Callable[[str], int]) -> list[str]:
    """Chunks of ``text`` of at most ``max_tokens`` tokens each (by ``count``).

    A text that fits is returned whole, as one chunk.
    """
    if max_tokens < 1:
        raise ParameterError(f"The 'max_tokens' parameter of chunk_text must be >= 1. Got {max_tokens!r} instead.")
    if count(text) <= max_tokens:
        return [text]
    chunks: list[str] = []
    current, current_tokens = "", 0
    for sentence in split_sentences(text):
        n = count(sentence)
        parts = [sentence] if n <= max_tokens else _cut_long(sentence, max_tokens, count)
        for part in parts:
            m = n if len(parts) == 1 else count(part)
            if current and current_tokens + m > max_tokens:
                chunks.append(current.strip())
                current, current_tokens = "", 0
            current += part
            current_tokens += m
    if current.strip():
        chunks.append(current.strip())
    return chunks
