"""``WireError``: a question or conversation from a client that cannot be judged.

The wire layer raises it with the request field at fault (``param``, dotted)
and a short machine-readable ``code``; the server answers it with a 400 in its
protocol's error shape, MCP with a one-line tool error.
"""

from __future__ import annotations

from judgelab.errors import QuestionError

__all__ = ["WireError"]


class WireError(QuestionError):
    """What the client sent cannot be judged; ``param`` names the field, ``code`` the kind of problem.

    Parameters
    ----------
    message
        What was wrong, where, and what to do.
    param
        The request field at fault, dotted (``"questions.0.choices"``).
    code
        A short machine-readable code (``"invalid_request"``, ``"too_many_choices"``).
    """

    def __init__(self, message: str, *, param: str | None = None, code: str = "invalid_request") -> None:
        super().__init__(message, name=param)
        self.param = param
        self.code = code
