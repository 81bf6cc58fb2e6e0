"""Request bodies decompressed in a stream, never past a byte limit.

A compressed body is inflated piece by piece as it arrives, and reading stops
as soon as the *decompressed* size passes the limit. A 64 KiB gzip body that
would expand to 64 MiB therefore costs the server about ``limit`` bytes, not
64 MiB. gzip, deflate (zlib) and zstd (when ``compression.zstd`` or
``backports.zstd`` is installed) are understood.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from typing import Protocol

from judgelab.server._errors import APIError

__all__ = ["Inflater", "inflater_for", "step_for"]

_STEP = 64 * 1024
"""The most decompressed bytes produced per call: the overshoot past the limit."""


class Inflater(Protocol):
    """Turns the compressed pieces of one body into decompressed pieces."""

    def feed(self, data: bytes, step: int) -> Iterator[bytes]:
        """Decompressed pieces of ``data``, each at most ``step`` bytes."""
        ...

    def finish(self) -> None:
        """Raise when the compressed stream ended early."""
        ...


class _Identity:
    def feed(self, data: bytes, step: int) -> Iterator[bytes]:
        yield data

    def finish(self) -> None:
        return None


class _Zlib:
    """gzip (``wbits`` 31) or zlib-wrapped deflate (15); concatenated gzip members too."""

    def __init__(self, wbits: int) -> None:
        self._wbits = wbits
        self._d = zlib.decompressobj(wbits)

    def feed(self, data: bytes, step: int) -> Iterator[bytes]:
        while True:
            out = self._d.decompress(data, step)
            if out:
                yield out
            data = self._d.unconsumed_tail
            if data or len(out) == step:
                continue  # more input, or output still pending inside zlib
            if self._d.eof and self._d.unused_data:
                data = self._d.unused_data  # the next gzip member
                self._d = zlib.decompressobj(self._wbits)
                continue
            return

    def finish(self) -> None:
        if not self._d.eof:
            raise zlib.error("the compressed data ends before its end-of-stream marker")


class _ZstdDecompressor(Protocol):
    """What ``_Zstd`` reads of ``compression.zstd.ZstdDecompressor`` (or the backport's)."""

    eof: bool
    needs_input: bool
    unused_data: bytes

    def decompress(self, data: bytes, max_length: int = ...) -> bytes: ...


class _Zstd:
    def __init__(self, factory: Callable[[], _ZstdDecompressor]) -> None:
        self._factory = factory
        self._d = factory()

    def feed(self, data: bytes, step: int) -> Iterator[bytes]:
        while True:
            out = self._d.decompress(data, step)
            if out:
                yield out
            data = b""
            if self._d.eof:
                if not self._d.unused_data:
                    return
                data = self._d.unused_data  # the next frame
                self._d = self._factory()
                continue
            if self._d.needs_input:
                return

    def finish(self) -> None:
        if not self._d.eof:
            raise ValueError("the zstd data ends before the end of its frame")


def _zstd_factory() -> Callable[[], _ZstdDecompressor] | None:
    try:  # Python 3.14+
        from compression.zstd import ZstdDecompressor  # type: ignore[import-not-found]
    except ImportError:
        try:
            from backports.zstd import ZstdDecompressor  # type: ignore[import-not-found]
        except ImportError:
            return None
    factory: Callable[[], _ZstdDecompressor] = ZstdDecompressor
    return factory


def inflater_for(encoding: str) -> Inflater:
    """The streaming decoder for a ``Content-Encoding`` header; 415 for one the server cannot read."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return _Identity()
    if encoding in ("gzip", "x-gzip"):
        return _Zlib(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _Zlib(zlib.MAX_WBITS)
    if encoding == "zstd":
        factory = _zstd_factory()
        if factory is None:
            raise APIError(
                415,
                "Request body is zstd-compressed but this server cannot decompress zstd. "
                "Install it on the server (pip install backports.zstd), or send the body "
                "uncompressed (TypeSafeClient(compression=False)).",
                code="unsupported_content_encoding",
            )
        return _Zstd(factory)
    raise APIError(
        415,
        f"Unsupported Content-Encoding {encoding!r}; send identity, gzip, deflate or zstd.",
        code="unsupported_content_encoding",
    )


def step_for(limit: int, size: int) -> int:
    """How many decompressed bytes to ask for next: just past the limit at most."""
    return max(1, min(_STEP, limit - size + 1))
