"""The served model's tokenizer, asked over HTTP: ``POST /tokenize`` at the server's root.

``judgelab serve`` and llama.cpp's server answer ``{"content": text,
"add_special": false}`` with ``{"tokens": [ids]}``. A remote judge counts
tokens with it, so that its document chunks are the in-process model's.
The first answer decides: a server without the endpoint (404, or an answer
of another shape: OpenAI, Ollama, vLLM's ``/v1``-only routes) is not asked
again, and tokens are estimated instead (``estimate_tokens``). Answers are
cached by text.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from judgelab.errors import RemoteError

if TYPE_CHECKING:
    from judgelab.engine._remote_client import RemoteClient

__all__ = ["ServedTokenizer", "tokenize_url"]

log = logging.getLogger(__name__)

_CACHE = 4096
_NOT_SERVED = {"not_found", "bad_request", "bad_response", "unauthorized"}


def tokenize_url(base_url: str) -> str:
    """The ``/tokenize`` URL of a server whose API base is ``base_url`` (a trailing ``/v1`` dropped)."""
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return f"{root}/tokenize"


class ServedTokenizer:
    """Token ids from the server's tokenizer, or ``None`` when it exposes none (thread-safe)."""

    def __init__(self, client: "RemoteClient") -> None:
        self.client = client
        self.url = tokenize_url(client.config.base_url)
        self.available: bool | None = None
        """``None`` until the server was asked; then whether it answers ``/tokenize``."""
        self._cache: OrderedDict[str, list[int]] = OrderedDict()
        self._lock = threading.Lock()

    def tokens(self, text: str) -> list[int] | None:
        """The server's token ids of ``text`` (plain text, no start token); ``None`` without a tokenizer.

        Raises
        ------
        RemoteError
            When the server cannot be reached (the row fails as any request would).
        """
        if self.available is False:
            return None
        with self._lock:
            if text in self._cache:
                self._cache.move_to_end(text)
                return self._cache[text]
        try:
            data = self.client.post(self.url, {"content": text, "add_special": False}, counted=False)
        except RemoteError as exc:
            if exc.reason not in _NOT_SERVED:
                raise
            self._unavailable(str(exc))
            return None
        ids = _ids(data)
        if ids is None:
            self._unavailable(f"an answer without 'tokens' ({str(data)[:80]})")
            return None
        self.available = True
        with self._lock:
            self._cache[text] = ids
            if len(self._cache) > _CACHE:
                self._cache.popitem(last=False)
        return ids

    def _unavailable(self, why: str) -> None:
        if self.available is None:
            log.info("%s: no served tokenizer (%s); token counts are estimates", self.url, why)
        self.available = False


def _ids(data: object) -> list[int] | None:
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        return None
    try:
        # llama.cpp answers ids, or {"id", "piece"} objects with with_pieces
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in tokens]
    except (KeyError, TypeError, ValueError):
        return None
