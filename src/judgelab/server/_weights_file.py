"""The served weights as Ollama describes a model: the file's size and its full sha256 digest.

Ollama's ``/api/tags`` and ``/api/ps`` give every model a ``size`` (bytes of
its weights) and a ``digest`` (64 hex digits). The digest of a GGUF file is
computed once per file (path, size and modification time), in a worker thread,
and cached; a model without one file (transformers folders, remote judges)
gets the sha256 of its model spec instead.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
from pathlib import Path

from judgelab.engine import BackendJudgeModel
from judgelab.weights import sha256_file

__all__ = ["WeightsFile", "weights_file"]


class WeightsFile:
    """Size and digest of what a model serves (``describe`` computes the digest once)."""

    def __init__(self, model: BackendJudgeModel) -> None:
        self.path = _single_file(model)
        self.size = self.path.stat().st_size if self.path is not None else int(model.info().size_bytes or 0)
        self._spec_digest = hashlib.sha256(model.spec.model_dump_json(exclude={"source_path"}).encode()).hexdigest()
        self._lock = asyncio.Lock()

    async def digest(self) -> str:
        """The weights file's sha256 (64 hex digits), computed in a worker thread the first time."""
        if self.path is None:
            return self._spec_digest
        stat = self.path.stat()
        async with self._lock:
            return await asyncio.to_thread(_file_sha256, str(self.path), stat.st_size, stat.st_mtime_ns)


def _single_file(model: BackendJudgeModel) -> Path | None:
    path = getattr(getattr(model.backend, "config", None), "model_path", None)
    if not path:
        return None
    p = Path(str(path))
    return p if p.is_file() else None


@functools.lru_cache(maxsize=8)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file (cached by path, size and modification time)."""
    return sha256_file(path)


def weights_file(model: BackendJudgeModel) -> WeightsFile:
    """A ``WeightsFile`` for ``model`` (cheap: the digest is computed on first use)."""
    return WeightsFile(model)
