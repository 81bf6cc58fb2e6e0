"""A cache of GGUF files converted to Hugging Face folders, for the transformers backend.

transformers reads a GGUF file (``from_pretrained(..., gguf_file=...)``) by
parsing its metadata in Python and dequantising every tensor: minutes for a
small model. judgelab does that once per file and keeps the result as an
ordinary Hugging Face model folder (``config.json``, ``model.safetensors`` in
float32, the tokenizer files), keyed by the GGUF's sha256::

    ~/.cache/judgelab/transformers/<sha256>/

The root can be moved with ``JUDGELAB_TRANSFORMERS_CACHE``. Deleting a folder
(or the whole root) is always safe: the next load converts again. A folder is
used only when its ``judgelab.json`` marker exists; the marker is written
last, and a conversion is built in a temporary folder and renamed into place,
so an interrupted conversion never leaves a half-written entry behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError

__all__ = ["cache_root", "gguf_sha256", "converted_folder", "CACHE_ENV"]

log = logging.getLogger(__name__)

CACHE_ENV = "JUDGELAB_TRANSFORMERS_CACHE"
MARKER = "judgelab.json"
_HASHES = "hashes.json"


def cache_root() -> Path:
    """The folder holding converted models (``$JUDGELAB_TRANSFORMERS_CACHE`` or the default)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/judgelab/transformers").expanduser()


def gguf_sha256(path: Path, root: Path | None = None) -> str:
    """sha256 of a GGUF file, remembered by (path, size, mtime) in the cache root."""
    path = path.resolve()
    stat = path.stat()
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
    index_path = (root or cache_root()) / _HASHES
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        index = {}
    if key in index:
        cached: str = index[key]
        return cached
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    sha = digest.hexdigest()
    index[key] = sha
    try:
        index_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = index_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(index, indent=1), encoding="utf-8")
        os.replace(tmp, index_path)
    except OSError as exc:  # a read-only cache still works, it just hashes again
        log.debug("could not record the hash of %s: %s", path, exc)
    return sha


def converted_folder(gguf: Path, root: Path | None = None) -> Path:
    """The Hugging Face folder converted from ``gguf``, converting it on first use.

    Raises
    ------
    JudgelabError
        When transformers cannot read the GGUF (an architecture it does not
        support) or the cache folder cannot be written.
    """
    root = root or cache_root()
    sha = gguf_sha256(gguf, root)
    target = root / sha
    if (target / MARKER).is_file():
        log.info("using the converted copy of %s in %s", gguf, target)
        return target
    try:
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", dir=root))
    except OSError as exc:
        raise JudgelabError(
            f"Cannot write the transformers cache folder {root}: {exc}. "
            f"Set {CACHE_ENV} to a writable folder."
        ) from exc
    try:
        _convert(gguf, work)
        (work / MARKER).write_text(
            json.dumps(_marker(gguf, sha), indent=1), encoding="utf-8"
        )
        try:
            os.rename(work, target)
        except OSError:
            if not (target / MARKER).is_file():  # not a concurrent conversion that won
                raise
            log.info("another process converted %s first; using its copy", gguf)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


def _marker(gguf: Path, sha: str) -> dict[str, str]:
    import torch
    import transformers

    return {
        "source": str(gguf),
        "sha256": sha,
        "converted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "dtype": "float32",
    }


def _convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.warning(
        "converting %s for the transformers backend (dequantising; once per file, cached in %s)",
        gguf,
        out.parent,
    )
    start = time.perf_counter()
    try:
        with _reuse_gguf_reader():
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(
                str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
            )
    except (ValueError, KeyError, RuntimeError, OSError) as exc:
        raise JudgelabError(
            f"transformers could not read the GGUF file {gguf}: {exc}. Its architecture may not "
            "be supported by transformers' GGUF loader; use the llama_cpp backend, or give the "
            "transformers backend a Hugging Face model folder or repo id instead."
        ) from exc
    # The weights are plain float tensors now; drop the GGUF quantiser so that
    # save_pretrained writes an ordinary safetensors checkpoint.
    model.hf_quantizer = None  # type: ignore[assignment]  # torch types Module attributes as Tensor | Module
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    log.warning("converted %s in %.0f s", gguf, time.perf_counter() - start)


@contextlib.contextmanager
def _reuse_gguf_reader() -> Iterator[None]:
    """Parse the GGUF once for both the tokenizer and the model.

    transformers builds a ``gguf.GGUFReader`` for each, and building one
    walks every vocabulary entry in Python (most of a conversion's time).
    While converting, readers are remembered by their arguments.
    """
    try:
        import gguf
    except ImportError:
        yield
        return
    original = gguf.GGUFReader
    readers: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], object] = {}

    def reader(*args: Any, **kwargs: Any) -> object:  # forwards whatever transformers passes
        key = (tuple(str(a) for a in args), tuple(sorted((k, str(v)) for k, v in kwargs.items())))
        if key not in readers:
            readers[key] = original(*args, **kwargs)
        return readers[key]

    gguf.GGUFReader = reader  # type: ignore[misc, assignment]  # a patch for the conversion only, undone below
    try:
        yield
    finally:
        gguf.GGUFReader = original  # type: ignore[misc]
