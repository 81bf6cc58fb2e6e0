"""Request bodies: size limit, content encoding, JSON, and the pydantic model."""

from __future__ import annotations

import hmac
import json
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from judgelab.server._errors import APIError, from_validation_error
from judgelab.server._inflate import inflater_for, step_for

__all__ = ["read_json", "parse_body", "check_auth"]

M = TypeVar("M", bound=BaseModel)


async def read_json(request: Request, limit: int) -> Any:
    """The request's JSON body, refusing bodies over ``limit`` bytes with 413."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise APIError(
            413,
            f"Request body is {declared} bytes; the limit is {limit} (judgelab serve --max-body-bytes).",
            code="body_too_large",
        )
    ctype = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if ctype.startswith("multipart/"):
        raise APIError(
            415,
            "Multipart bodies (image assets) are not supported: a judgelab judge reads text only. "
            "Send the state and questions as application/json without assets.",
            code="unsupported_media_type",
        )
    raw = await _read_body(request, limit)
    if not raw.strip():
        raise APIError(400, "Request body is empty; send a JSON object.", code="invalid_json")
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise APIError(400, f"Request body is not UTF-8: {exc}", code="invalid_json") from exc
    except json.JSONDecodeError as exc:
        raise APIError(
            400,
            f"Request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}.",
            code="invalid_json",
        ) from exc


async def _read_body(request: Request, limit: int) -> bytearray:
    """The body, decompressed as it streams in; 413 once either size passes ``limit``."""
    encoding = request.headers.get("content-encoding", "")
    inflater = inflater_for(encoding)  # 415 before reading anything
    body = bytearray()
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise APIError(
                    413,
                    f"Request body is over the limit of {limit} bytes (judgelab serve --max-body-bytes).",
                    code="body_too_large",
                )
            for piece in inflater.feed(chunk, step_for(limit, len(body))):
                body += piece
                if len(body) > limit:
                    raise APIError(
                        413,
                        f"Request body is over {limit} bytes once decompressed; the limit is {limit} "
                        "(judgelab serve --max-body-bytes).",
                        code="body_too_large",
                    )
        inflater.finish()
    except APIError:
        raise
    except Exception as exc:  # corrupt compressed data (zlib.error, zstd errors)
        raise APIError(400, f"Request body is not valid {encoding.strip()} data: {exc}", code="invalid_body") from exc
    return body


async def parse_body(request: Request, model: type[M]) -> M:
    """The JSON body validated as ``model`` (400 naming the bad fields)."""
    data = await read_json(request, request.app.state.judge.config.max_body_bytes)
    if not isinstance(data, dict):
        raise APIError(
            400, f"Request body must be a JSON object, got {type(data).__name__}.", code="invalid_request"
        )
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc) from exc


def check_auth(request: Request, api_key: str | None) -> None:
    """Raise 401 unless the request carries ``Authorization: Bearer <api_key>``."""
    if not api_key:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise APIError(
            401,
            "Missing API key: send 'Authorization: Bearer <key>' (the key given to "
            "judgelab serve --api-key or $JUDGELAB_API_KEY).",
            code="missing_api_key",
        )
    if not hmac.compare_digest(token.strip().encode(), api_key.encode()):
        raise APIError(401, "Invalid API key.", code="invalid_api_key")
