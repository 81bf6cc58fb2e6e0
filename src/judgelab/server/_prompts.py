"""Chat messages to one judge prompt in the model's format (``/v1/chat/completions``, ``/api/chat``).

The conversation becomes one judge turn through ``judgelab.wire.one_turn``
(system messages replace the spec's system prompt); a ``WireError`` it raises
is answered with a 400 naming the message at fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from judgelab.engine import JudgeModel
from judgelab.wire import content_text, one_turn

__all__ = ["ChatTurn", "chat_prompt"]


class ChatTurn(Protocol):
    """A chat message as the protocols' request bodies parse it."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> object: ...


def chat_prompt(model: JudgeModel, messages: Sequence[ChatTurn], *, param: str = "messages") -> str:
    """The prompt for chat messages (each with ``role`` and ``content``: text or text parts)."""
    turns = [(m.role, content_text(m.content, param=f"{param}.{i}.content")) for i, m in enumerate(messages)]
    user, system = one_turn(turns, param=param)
    return model.render(user, system=system)
