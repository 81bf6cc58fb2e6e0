"""Chat messages to one judge prompt.

A judge answers one question, so a conversation becomes one user turn: the
system messages (joined) replace the model spec's system prompt, and the other
messages become the user text. A single user message is used as it is; longer
conversations are written out as ``Role: content`` lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgelab.engine import JudgeModel
from judgelab.server._errors import APIError

__all__ = ["message_text", "chat_prompt"]


def message_text(content: Any, *, param: str) -> str:
    """The text of a message's content: a string, or OpenAI-style parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise APIError(
                    400,
                    f"{param}[{i}] is a {kind!r} part; a judgelab judge reads text parts only.",
                    code="unsupported_content",
                    param=f"{param}.{i}",
                )
        return "\n".join(texts)
    raise APIError(400, f"{param} must be a string or a list of text parts.", code="invalid_request", param=param)


def chat_prompt(model: JudgeModel, messages: Sequence[tuple[str, str]], *, param: str = "messages") -> str:
    """The prompt for ``(role, text)`` messages in the model's prompt format."""
    if not messages:
        raise APIError(400, f"{param} is empty; send at least one user message.", code="invalid_request", param=param)
    systems = [text for role, text in messages if role in ("system", "developer")]
    turns = [(role, text) for role, text in messages if role not in ("system", "developer")]
    if not turns:
        raise APIError(400, f"{param} has only system messages; add a user message.", code="invalid_request", param=param)
    if len(turns) == 1 and turns[0][0] == "user":
        user = turns[0][1]
    else:
        user = "\n\n".join(f"{role.capitalize()}: {text}" for role, text in turns)
    system = "\n\n".join(systems) if systems else None
    return model.render(user, system=system)
