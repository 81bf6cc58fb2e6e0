"""Yes/no ("noul") questions over a state, on the engine's probabilities.

A stop-gap until ``judgelab.questions`` (typed questions: ``Noul``, ``Choice``,
``Score``) exists; ``/v1/systemone`` switches to it then. The state comes
first in every prompt, so the questions about one state share its prefix in
the KV cache and the state is computed once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from judgelab.engine import JudgeModel

__all__ = ["content_text", "noul_prompt", "NOUL_LABELS"]

NOUL_LABELS = ("Yes", "No")


def content_text(content: Any) -> str:
    """Text for a state, instructions or criterion: strings as they are, JSON otherwise."""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, indent=2, sort_keys=False)


def noul_prompt(
    model: JudgeModel, state: Any, instructions: Any | None, criteria: Mapping[str, Any] | None
) -> str:
    """The prompt asking a yes/no question about ``state``."""
    criteria = criteria or {}
    true, false = criteria.get("true"), criteria.get("false")
    lines = [content_text(state), ""]
    if instructions is not None:
        lines.append(f"Question: {content_text(instructions)}")
    else:
        lines.append("Question: Is the following true of the text above?")
    if true is not None:
        lines.append(f"Answer Yes if: {content_text(true)}")
    if false is not None:
        lines.append(f"Answer No if: {content_text(false)}")
    lines.append("Answer Yes or No.")
    return model.render("\n".join(lines))
