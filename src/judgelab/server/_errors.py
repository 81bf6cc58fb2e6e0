"""HTTP errors: one exception, rendered in the shape each protocol's clients read.

- Ollama paths (``/api/...``): ``{"error": "message"}`` (what the ``ollama``
  client and Spring AI show).
- Everything else: ``{"error": {"message", "type", "code", "param"}}`` (the
  OpenAI shape; the TypeSafe SDK reads ``error.message`` too).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from judgelab.errors import ContextLengthError, JudgelabError, LabelError, TemplateError
from judgelab.wire import WireError

__all__ = ["APIError", "error_response", "from_judgelab_error", "from_validation_error", "install_error_handlers"]

log = logging.getLogger(__name__)

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    415: "unsupported_media_type",
    499: "client_closed_request",
    500: "server_error",
    503: "unavailable",
}


class APIError(Exception):
    """An error answered with ``status`` and a JSON body that says what was wrong.

    Parameters
    ----------
    status
        The HTTP status (4xx for the client's mistakes).
    message
        What was wrong, where, and what to do.
    code
        A short machine-readable code (``"context_length_exceeded"``).
    param
        The request field at fault, dotted (``"messages.0.content"``).
    """

    def __init__(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None,
        detail: Sequence[Mapping[str, object]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.detail = detail


def error_response(request: Request, exc: APIError) -> JSONResponse:
    """The protocol-shaped JSON response for ``exc``."""
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    if request.url.path.startswith("/api/"):
        body: dict[str, object] = {"error": exc.message}
    else:
        body = {
            "error": {
                "message": exc.message,
                "type": _TYPES.get(exc.status, "invalid_request_error"),
                "code": exc.code,
                "param": exc.param,
            }
        }
        if exc.detail:
            body["detail"] = exc.detail
    return JSONResponse(body, status_code=exc.status, headers=headers)


def from_validation_error(exc: ValidationError, *, where: str = "body") -> APIError:
    """A 400 naming every invalid or missing field of a request body."""
    problems = []
    detail = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(body)"
        problems.append(f"{loc}: {err['msg']}")
        detail.append({"loc": [where, *err["loc"]], "msg": err["msg"], "type": err["type"]})
    first = detail[0]["loc"][1:] if detail else []
    return APIError(
        400,
        "Invalid request body: " + "; ".join(problems) + ".",
        code="invalid_request",
        param=".".join(str(p) for p in first) or None,
        detail=detail,
    )


def from_judgelab_error(exc: JudgelabError, *, param: str | None = None) -> APIError:
    """The 4xx for a judgelab error raised by a request's content.

    A ``WireError`` names its own field and code; one chained to another
    judgelab error (a question the model cannot answer) is answered as that
    error, on the wire error's field.
    """
    if isinstance(exc, WireError):
        if isinstance(exc.__cause__, JudgelabError):
            return from_judgelab_error(exc.__cause__, param=exc.param)
        return APIError(400, str(exc), code=exc.code, param=exc.param)
    if isinstance(exc, ContextLengthError):
        return APIError(
            400,
            f"{exc} (prompt tokens: {exc.n_tokens}, context holds: {exc.n_ctx})",
            code="context_length_exceeded",
            param=param,
        )
    if isinstance(exc, LabelError):
        return APIError(400, str(exc), code="invalid_labels", param=param or "labels")
    if isinstance(exc, TemplateError):
        return APIError(400, str(exc), code="invalid_template", param=param)
    return APIError(400, str(exc), code=type(exc).__name__, param=param)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error on ``app`` in the shape its protocol's clients read."""

    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError) -> JSONResponse:
        return error_response(request, exc)

    @app.exception_handler(WireError)
    async def _wire_error(request: Request, exc: WireError) -> JSONResponse:
        return error_response(request, from_judgelab_error(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            message = f"No endpoint {request.method} {request.url.path}; see docs/server.md for the endpoints."
        elif exc.status_code == 405:
            message = f"Method {request.method} is not allowed on {request.url.path}."
        else:
            message = str(exc.detail)
        code = "not_found" if exc.status_code == 404 else None
        return error_response(request, APIError(exc.status_code, message, code=code))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(request, APIError(400, f"Invalid request: {exc.errors()}", code="invalid_request"))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        message = f"Internal error: {type(exc).__name__}: {exc}"
        return error_response(request, APIError(500, message, code="internal_error"))
