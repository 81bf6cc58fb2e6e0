"""Request bodies: size limit, content encoding, JSON, and the pydantic model."""

from __future__ import annotations

import hmac
import json
import re
from typing import TypeVar

import numpy as np
from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ValidationError

from judgelab.server._errors import APIError, from_validation_error
from judgelab.server._inflate import inflater_for, step_for

__all__ = ["read_json", "parse_body", "check_auth"]

M = TypeVar("M", bound=BaseModel)

MAX_JSON_DEPTH = 64
"""Deeper request JSON gets 400: judges read flat states, and deep nesting only costs stack."""


async def read_json(request: Request, limit: int) -> object:
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
    if len(raw) > _PARSE_INLINE_BYTES:  # keep the event loop free for other requests
        return await run_in_threadpool(_parse_json, raw)
    return _parse_json(raw)


_PARSE_INLINE_BYTES = 256 * 1024


def _parse_json(raw: bytearray) -> object:
    """Parse a JSON body: 400 for text that is not UTF-8 JSON, too deep, or has lone surrogates."""
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH:  # else it cannot nest deeper
        depth = _nesting_depth(raw)
        if depth > MAX_JSON_DEPTH:
            raise APIError(
                400,
                f"Request body is JSON nested {depth} levels deep; at most {MAX_JSON_DEPTH} are accepted. "
                "Flatten the state.",
                code="invalid_json",
            )
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise APIError(400, f"Request body is not UTF-8: {exc}", code="invalid_json") from exc
    except json.JSONDecodeError as exc:
        raise APIError(
            400,
            f"Request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}.",
            code="invalid_json",
        ) from exc
    _check_no_lone_surrogates(raw, data)
    return data


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _nesting_depth(raw: bytes | bytearray) -> int:
    """How deep the JSON's arrays and objects nest, counted outside strings.

    Vectorised over the bytes (no recursion, no Python loop): a quote counts
    unless an odd run of backslashes precedes it.
    """
    arr = np.frombuffer(bytes(raw), dtype=np.uint8)
    index = np.arange(len(arr))
    backslash = arr == ord("\\")
    last_plain = np.maximum.accumulate(np.where(backslash, -1, index))
    run_before = np.empty(len(arr), dtype=np.int64)
    run_before[:1] = 0
    run_before[1:] = index[:-1] - last_plain[:-1]  # backslashes right before each byte
    quote = (arr == ord('"')) & (run_before % 2 == 0)
    outside = np.cumsum(quote) % 2 == 0
    opens = (arr == ord("[")) | (arr == ord("{"))
    closes = (arr == ord("]")) | (arr == ord("}"))
    steps = (opens & outside).astype(np.int32) - (closes & outside).astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


def _check_no_lone_surrogates(raw: bytes | bytearray, data: object) -> None:
    """400 for a ``\\ud800``-style escape that is not half of a pair: such text cannot be tokenised."""
    if not _SURROGATE_ESCAPE.search(raw):
        return
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end].encode("utf-8", "backslashreplace").decode()
        raise APIError(
            400,
            f"Request body has a lone surrogate ({bad}) in a string; JSON text must be valid UTF-16 pairs. "
            "Remove it or replace it with U+FFFD.",
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
