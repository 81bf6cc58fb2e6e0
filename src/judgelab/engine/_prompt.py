"""Rendering a (system, user) pair into a model's prompt text.

Chat-style specs use the model's Jinja chat template (the GGUF's own, or the
spec's ``chat_template``), rendered the way transformers renders it; raw-style
specs fill the spec's ``raw_template``.

The result is a ``Prompt``: the text, plus which parts of it the caller
supplied. Only the template's own text may hold control tokens
(``<start_of_turn>``, ``<bos>``...); the supplied parts are tokenised as plain
text, so a document or claim that contains ``<end_of_turn>`` cannot forge the
turn structure.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Self

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from judgelab.errors import SpecError
from judgelab.specs import PromptFormat

__all__ = ["Prompt", "render_prompt"]

log = logging.getLogger(__name__)

Span = tuple[int, int]


class Prompt(str):
    """Prompt text that remembers which spans are plain (caller-supplied) text.

    A ``Prompt`` is a ``str`` (compare, hash, slice and print it as one);
    ``plain_spans`` are the ``[start, end)`` character ranges that the engine
    tokenises with special-token parsing off. The rest is the template's own
    text, whose marker strings become control tokens.

    ``prompt + text`` (and ``text + prompt``) is a ``Prompt`` in which the
    added ``str`` is plain text: what a caller appends (a tag, generated
    feedback) can never add control tokens. Other string operations
    (slicing, f-strings, ``str.format``) return a plain ``str``, which the
    engine tokenises as it always has: special-token text parsed everywhere.
    """

    plain_spans: tuple[Span, ...]

    def __new__(cls, text: str, plain_spans: Sequence[Span] = ()) -> Self:
        obj = super().__new__(cls, text)
        obj.plain_spans = _normalise(plain_spans, len(text))
        return obj

    @classmethod
    def from_parts(cls, parts: Sequence[tuple[str, bool]]) -> "Prompt":
        """A prompt from ``(text, plain)`` parts, in order."""
        text, spans, pos = [], [], 0
        for part, plain in parts:
            if plain and part:
                spans.append((pos, pos + len(part)))
            text.append(part)
            pos += len(part)
        return cls("".join(text), spans)

    @classmethod
    def plain(cls, text: str) -> "Prompt":
        """All of ``text`` as plain text (no control tokens at all)."""
        return cls(text, [(0, len(text))])

    def pieces(self) -> list[tuple[str, bool]]:
        """``(text, parse_special)`` pieces covering the whole prompt, in order."""
        out: list[tuple[str, bool]] = []
        pos = 0
        for start, end in self.plain_spans:
            if start > pos:
                out.append((str.__getitem__(self, slice(pos, start)), True))
            out.append((str.__getitem__(self, slice(start, end)), False))
            pos = end
        if pos < len(self):
            out.append((str.__getitem__(self, slice(pos, None)), True))
        return out

    def _parts(self) -> list[tuple[str, bool]]:
        return [(text, not special) for text, special in self.pieces()]

    def __add__(self, other: object) -> "Prompt":
        if not isinstance(other, str):
            return NotImplemented
        tail = other._parts() if isinstance(other, Prompt) else [(other, True)]
        return Prompt.from_parts(self._parts() + tail)

    def __radd__(self, other: object) -> "Prompt":
        if not isinstance(other, str):
            return NotImplemented
        return Prompt.from_parts([(other, True), *self._parts()])

    def __repr__(self) -> str:
        return f"Prompt({str.__repr__(self)}, plain_spans={self.plain_spans!r})"


def _normalise(spans: Sequence[Span], length: int) -> tuple[Span, ...]:
    """Sorted, merged, non-empty spans inside ``[0, length)``."""
    out: list[list[int]] = []
    for start, end in sorted((max(0, int(a)), min(length, int(b))) for a, b in spans):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return tuple((a, b) for a, b in out)


def _raise(message: str) -> None:
    raise jinja2.TemplateError(message)


@lru_cache(maxsize=16)
def _compile(template: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise
    return env.from_string(template)


def render_prompt(
    fmt: PromptFormat,
    user: str,
    *,
    system: str | None = None,
    model_template: str | None = None,
    bos_text: str = "",
    eos_text: str = "",
    model_id: str = "",
) -> Prompt:
    """The prompt for ``user`` (and ``system``, else the spec's system prompt).

    The returned text does not start with the BOS token; the backend adds it
    when tokenising. ``user`` and ``system`` are marked as plain text.
    """
    system = fmt.system if system is None else system
    if fmt.style == "raw":
        return _render_raw(fmt.raw_template, user, system or "")
    template = fmt.chat_template or model_template
    if not template:
        raise SpecError(
            f"Model {model_id!r} has prompt style 'chat' but its weights carry no chat template. "
            "Set `prompt.chat_template` in its spec, or use `style = \"raw\"`."
        )
    contents = ([system] if system else []) + [user]
    render = _compile(template).render

    def messages(texts: Sequence[str]) -> list[dict[str, str]]:
        roles = (["system"] if system else []) + ["user"]
        return [{"role": r, "content": t} for r, t in zip(roles, texts)]

    try:
        text = render(messages=messages(contents), add_generation_prompt=True,
                      bos_token=bos_text, eos_token=eos_text)
        skeleton = render(messages=messages([_sentinel(i) for i in range(len(contents))]),
                          add_generation_prompt=True, bos_token=bos_text, eos_token=eos_text)
    except jinja2.TemplateError as exc:
        raise SpecError(f"Chat template of model {model_id!r} failed to render: {exc}") from exc
    spans = _content_spans(text, skeleton, contents, model_id)
    if bos_text and text.startswith(bos_text):
        cut = len(bos_text)
        text = text[cut:]
        spans = [(a - cut, b - cut) for a, b in spans]
    return Prompt(text, spans)


def _render_raw(template: str, user: str, system: str) -> Prompt:
    """``raw_template`` with ``{system}`` and ``{user}`` filled (as plain parts)."""
    values = {"{system}": system, "{user}": user}
    parts = [
        (values[piece], True) if piece in values else (piece, False)
        for piece in re.split(r"(\{system\}|\{user\})", template)
    ]
    if not system:  # no system prompt: no blank lines before the user turn
        while parts and parts[0][0].lstrip("\n") == "":
            parts.pop(0)
        if parts:
            parts[0] = (parts[0][0].lstrip("\n"), parts[0][1])
    return Prompt.from_parts(parts)


_SENTINEL = re.compile("\ue000(\\d+)\ue001")


def _sentinel(i: int) -> str:
    # private-use characters: no template trims, escapes or matches them
    return f"\ue000{i}\ue001"


def _content_spans(text: str, skeleton: str, contents: Sequence[str], model_id: str) -> list[Span]:
    """Where the message contents lie in ``text``.

    ``skeleton`` is the same template rendered with sentinels for contents;
    its literal pieces must appear in ``text`` in order, with each content
    (as given, or trimmed, as templates often do) between them. When they
    cannot be aligned that way, each literal piece is found by search and
    what lies between is taken as content.
    """
    items: list[str | int] = []
    pos = 0
    for match in _SENTINEL.finditer(skeleton):
        items.append(skeleton[pos:match.start()])
        items.append(int(match.group(1)))
        pos = match.end()
    items.append(skeleton[pos:])
    spans = _align(text, items, contents, 0, 0)
    if spans is not None:
        return spans
    log.warning("chat template of %r transforms message contents; marking them by search", model_id)
    spans, pos = [], 0
    for k, item in enumerate(items):
        if isinstance(item, str):
            found = text.find(item, pos) if item else pos
            if found < 0:
                # cannot tell the template from the contents: nothing is trusted
                return [(0, len(text))]
            if k and found > pos:
                spans.append((pos, found))
            pos = found + len(item)
    if pos < len(text):
        spans.append((pos, len(text)))
    return spans


def _align(text: str, items: list[str | int], contents: Sequence[str], k: int, pos: int) -> list[Span] | None:
    if k == len(items):
        return [] if pos == len(text) else None
    item = items[k]
    if isinstance(item, str):
        return _align(text, items, contents, k + 1, pos + len(item)) if text.startswith(item, pos) else None
    content = contents[item]
    for form in dict.fromkeys((content, content.strip(), content.lstrip(), content.rstrip())):
        if text.startswith(form, pos):
            rest = _align(text, items, contents, k + 1, pos + len(form))
            if rest is not None:
                return [(pos, pos + len(form)), *rest]
    return None
