"""A conversation to one judge turn: the user text and the system prompt.

A judge answers one question, so a conversation becomes one user turn: the
system and developer messages (joined) replace the model spec's system prompt,
and the other messages become the user text. A single user message is used as
it is; longer conversations are written out as ``Role: text`` blocks. The
OpenAI and Ollama chat endpoints, ``/v1/decisions`` and MCP's ``decide`` all
go through ``one_turn``; message contents go through ``content_text``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from judgelab.wire._errors import WireError

__all__ = ["SYSTEM_ROLES", "content_text", "one_turn"]

SYSTEM_ROLES = ("system", "developer")
"""Roles whose messages become the judge's system prompt."""

_TEXT_PARTS = ("text", "input_text", "output_text")


def _part_text(part: object, param: str) -> str:
    """The text of one content part: a string, or a mapping with a ``type``."""
    if isinstance(part, str):
        return part
    if isinstance(part, BaseModel):
        part = part.model_dump()
    if not isinstance(part, Mapping):
        raise WireError(f"{param} is a {type(part).__name__}; send a string or a text part.",
                        param=param, code="invalid_type")
    kind = part.get("type")
    if kind in _TEXT_PARTS:
        text = part.get("text", "")
        if not isinstance(text, str):
            raise WireError(f"{param}.text must be a string.", param=f"{param}.text", code="invalid_type")
        return text
    if kind == "refusal":
        return str(part.get("refusal", ""))
    if kind == "input_json":
        if "data" not in part:
            raise WireError(f"{param} is an input_json part without data.", param=f"{param}.data")
        return json.dumps(part["data"], ensure_ascii=False, indent=2)
    raise WireError(f"{param} is a {kind!r} part: the judge reads text only (text parts only). "
                    "Send text or input_json parts.", param=param, code="unsupported_content")


def content_text(content: object, *, param: str) -> str:
    """The text of a message's content: ``None``, a string, or a list of parts (joined by newlines).

    Parts are strings, mappings or pydantic models with a ``type``: ``text`` / ``input_text`` / ``output_text``, ``refusal`` or
    ``input_json`` (its data as indented JSON).

    Raises
    ------
    WireError
        For an image, file or audio part, or any other part type
        (``unsupported_content``), naming the part (``param.i``).
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "\n".join(_part_text(part, f"{param}.{i}") for i, part in enumerate(content))
    raise WireError(f"{param} must be a string or a list of text parts.", param=param)


def one_turn(turns: Sequence[tuple[str, str]], *, param: str) -> tuple[str, str | None]:
    """The user text and the system prompt (``None`` without system messages) for ``(role, text)`` turns.

    Raises
    ------
    WireError
        When there are no turns, or only system / developer ones.
    """
    if not turns:
        raise WireError(f"{param} is empty; send at least one user message.", param=param)
    systems = [text for role, text in turns if role in SYSTEM_ROLES]
    others = [(role, text) for role, text in turns if role not in SYSTEM_ROLES]
    if not others:
        raise WireError(f"{param} has only system messages; add a user message with the content to judge.",
                        param=param)
    if len(others) == 1 and others[0][0] == "user":
        text = others[0][1]
    else:
        text = "\n\n".join(f"{role.capitalize()}: {body}" for role, body in others)
    return text, ("\n\n".join(systems) if systems else None)
