"""Request bodies: size limit, content encoding, JSON, and the pydantic model."""

from __future__ import annotations

import gzip
import hmac
import json
import zlib
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

from judgelab.server._errors import APIError, from_validation_error

__all__ = ["read_json", "parse_body", "check_auth"]

M = TypeVar("M", bound=BaseModel)


def _zstd_decompress():
    try:  # Python 3.14+
        from compression.zstd import decompress  # type: ignore[import-not-found]
    except ImportError:
        try:
            from backports.zstd import decompress  # type: ignore[import-not-found]
        except ImportError:
            return None
    return decompress


def _decode(raw: bytes, encoding: str, limit: int) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return raw
    try:
        if encoding in ("gzip", "x-gzip"):
            out = gzip.decompress(raw)
        elif encoding == "deflate":
            out = zlib.decompress(raw)
        elif encoding == "zstd":
            decompress = _zstd_decompress()
            if decompress is None:
                raise APIError(
                    415,
                    "Request body is zstd-compressed but this server cannot decompress zstd. "
                    "Install it on the server (pip install backports.zstd), or send the body "
                    "uncompressed (TypeSafeClient(compression=False)).",
                    code="unsupported_content_encoding",
                )
            out = decompress(raw)
        else:
            raise APIError(
                415,
                f"Unsupported Content-Encoding {encoding!r}; send identity, gzip, deflate or zstd.",
                code="unsupported_content_encoding",
            )
    except APIError:
        raise
    except Exception as exc:  # corrupt compressed data
        raise APIError(400, f"Request body is not valid {encoding} data: {exc}", code="invalid_body") from exc
    if len(out) > limit:
        raise APIError(
            413,
            f"Request body is {len(out)} bytes once decompressed; the limit is {limit} "
            "(judgelab serve --max-body-bytes).",
            code="body_too_large",
        )
    return out


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
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise APIError(
                413,
                f"Request body is over the limit of {limit} bytes (judgelab serve --max-body-bytes).",
                code="body_too_large",
            )
        chunks.append(chunk)
    raw = _decode(b"".join(chunks), request.headers.get("content-encoding", ""), limit)
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
