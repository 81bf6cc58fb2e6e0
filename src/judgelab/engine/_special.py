"""Tokenising a ``Prompt``: control tokens only from the template's own text.

A tokenizer that parses special tokens cuts the text at every control-token
string (``<start_of_turn>``, ``<bos>``...), emits those tokens, and tokenises
each fragment between them on its own. ``fragments`` does the same cut, but
only inside the template's parts of a prompt; the caller-supplied parts join
the neighbouring fragments as plain text. A backend then tokenises each text
fragment with special parsing off, so for a prompt whose supplied parts hold
no control-token strings the ids are those of parsing the whole text, and
for one that does, the strings stay text.

Pure logic over strings and ids: the backend supplies the tokenizer calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Control", "TemplateSplitter", "fragments", "split_at_controls"]

# what llama.cpp's lstrip/rstrip token attributes strip (C isspace)
_WHITESPACE = " \t\n\v\f\r"


@dataclass(frozen=True)
class Control:
    """A control token found in template text.

    ``lstrip``/``rstrip``: the tokenizer swallows whitespace before/after it
    (some vocabularies mark their special tokens so).
    """

    token_id: int
    lstrip: bool = False
    rstrip: bool = False


def split_at_controls(
    text: str,
    tokens: Sequence[int],
    control: Callable[[int], Control | None],
    piece: Callable[[int], str],
) -> list[str | Control]:
    """``text`` cut at the control tokens its special-parsing tokenisation holds.

    ``tokens`` is that tokenisation (no BOS), ``control(id)`` says whether
    an id is a control token, ``piece(id)`` gives its text.
    """
    out: list[str | Control] = []
    pos = 0
    for token in tokens:
        found = control(token)
        if found is None:
            continue
        marker = piece(token)
        at = text.find(marker, pos) if marker else -1
        if at < 0:  # e.g. a control token with no text: keep it, cut nothing
            out.append(found)
            continue
        out.append(text[pos:at])
        out.append(found)
        pos = at + len(marker)
    out.append(text[pos:])
    return out


class TemplateSplitter:
    """A backend's ``split`` for :func:`fragments`, cached: templates have few distinct pieces.

    ``split_controls(text)`` cuts one template piece at its control tokens
    (the backend tokenises it with special parsing on); at most ``max_entries``
    pieces are remembered.
    """

    def __init__(self, split_controls: Callable[[str], list[str | Control]], *, max_entries: int = 512) -> None:
        self._split_controls = split_controls
        self._max_entries = max_entries
        self._cache: dict[str, list[str | Control]] = {}

    def __call__(self, text: str) -> list[str | Control]:
        found = self._cache.get(text)
        if found is None:
            found = self._split_controls(text)
            if len(self._cache) < self._max_entries:
                self._cache[text] = found
        return list(found)


def fragments(
    pieces: Sequence[tuple[str, bool]],
    split: Callable[[str], list[str | Control]],
) -> list[str | int]:
    """Text fragments and control-token ids of ``(text, parse_special)`` pieces.

    Adjacent text merges across pieces (as one tokenizer call over the whole
    text would see it); ``split`` cuts a template piece at its control tokens.
    Whitespace that a control token's lstrip/rstrip swallows is dropped, as
    the tokenizer does when it parses the whole text.
    """
    out: list[str | int] = []
    swallow_next = False
    for text, special in pieces:
        items: list[str | Control] = split(text) if special else [text]
        for item in items:
            if isinstance(item, Control):
                if item.lstrip and out and isinstance(out[-1], str):
                    out[-1] = out[-1].rstrip(_WHITESPACE)
                out.append(item.token_id)
                swallow_next = item.rstrip
                continue
            if swallow_next:
                item = item.lstrip(_WHITESPACE)
                swallow_next = not item  # still swallowing across an empty piece
            if not item:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += item
            else:
                out.append(item)
    return [f for f in out if f != ""]
