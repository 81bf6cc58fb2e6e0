"""Find a model's weight file from its spec's sources, without downloading.

Sources are tried in the spec's order. Only ``pull`` downloads (from Hugging
Face), and only when a person asks for it (``judgelab models pull ID``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from judgelab.errors import JudgelabError, WeightsChecksumError, WeightsNotFoundError
from judgelab.specs import ModelSpec, WeightSource

__all__ = ["WeightsStatus", "resolve_weights", "weights_status", "pull", "check_sha256", "sha256_file"]

log = logging.getLogger(__name__)

# assemble() hashes a 250 MB file; do it once per process and path.
_assembled: dict[str, Path] = {}
# (path, size, mtime_ns) of files whose pinned sha256 was checked in this process.
_verified: set[tuple[str, int, int]] = set()


def _stamp(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return (str(path.resolve()), st.st_size, st.st_mtime_ns)


def _cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judgelab" / "verified-weights.json"


def _known_good(stamp: tuple[str, int, int], sha256: str) -> bool:
    """Whether this file, unchanged since (size, mtime), was checked against ``sha256`` before."""
    if stamp in _verified:
        return True
    try:
        seen = json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(seen.get(stamp[0]) == [stamp[1], stamp[2], sha256])


def _remember(stamp: tuple[str, int, int], sha256: str) -> None:
    _verified.add(stamp)
    path = _cache_file()
    try:
        seen = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        seen[stamp[0]] = [stamp[1], stamp[2], sha256]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(seen, indent=1), encoding="utf-8")
    except (OSError, ValueError):  # a read-only home only costs a second hash next time
        log.debug("could not record the checked weights in %s", path)


def sha256_file(path: str | Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks (the one file hasher of weights, adapters and data files)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(path: Path, expected: str, *, model_id: str, source: str) -> None:
    """Raise ``WeightsChecksumError`` unless ``path``'s sha256 is ``expected`` (hashed once per file version)."""
    stamp = _stamp(path)
    if _known_good(stamp, expected):
        return
    actual = sha256_file(path)
    if actual != expected:
        raise WeightsChecksumError(
            f"The weights of model {model_id!r} at {path} have sha256 {actual}, but the spec pins {expected}: "
            f"the file is corrupt, truncated or another build. Reinstall it ({source}, e.g. with pip's "
            "--force-reinstall), or point the spec at the file you mean to use.",
            model_id=model_id, path=str(path), expected=expected, actual=actual)
    _remember(stamp, expected)


@dataclass(frozen=True)
class WeightsStatus:
    """Whether a spec's weights are on this machine, and where or how to get them."""

    present: bool
    path: Path | None
    source: str | None
    hint: str


def _from_source(src: WeightSource, *, assemble: bool) -> Path | None:
    if src.path:
        path = Path(src.path).expanduser()
        return path if path.is_file() else None
    if src.env:
        value = os.environ.get(src.env)
        if value and Path(value).expanduser().is_file():
            return Path(value).expanduser()
        return None
    if src.pypi and src.module:  # the spec's validator requires `module` with `pypi`
        return _from_package(src.pypi, src.module, src.file, assemble=assemble)
    if src.hf_repo and src.hf_file:  # ... and `hf_file` with `hf_repo`
        return _hf_cached(src.hf_repo, src.hf_file)
    return None


def _from_package(pypi: str, module_name: str, file: str | None, *, assemble: bool) -> Path | None:
    if file:
        return _packaged_file(module_name, file)
    if module_name in _assembled:
        return _assembled[module_name]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    if not assemble:
        out = getattr(module, "default_output_path", None)
        if callable(out):
            path = Path(out())
            if path.is_file():
                return path
        return Path(module.__file__ or ".").parent  # installed; assembled on load
    log.info("assembling weights from PyPI package %s", pypi)
    path = Path(module.assemble())
    _assembled[module_name] = path
    return path


def _packaged_file(module: str, name: str) -> Path | None:
    """``name`` inside the installed package ``module``, found without importing (running) the package."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    for folder in (found.submodule_search_locations or []) if found else []:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


def _hf_cached(repo: str, filename: str) -> Path | None:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    hit = try_to_load_from_cache(repo, filename)
    return Path(hit) if isinstance(hit, str) and Path(hit).is_file() else None


def _hints(spec: ModelSpec) -> str:
    return "; or ".join(s.describe() for s in spec.weights) or "add a `[[weights]]` entry to its spec"


def weights_status(spec: ModelSpec) -> WeightsStatus:
    """Check the sources without assembling or downloading anything."""
    for src in spec.weights:
        path = _from_source(src, assemble=False)
        if path is not None:
            return WeightsStatus(True, path, src.kind, src.describe())
    return WeightsStatus(False, None, None, _hints(spec))


def resolve_weights(spec: ModelSpec) -> Path:
    """The weight file's path, assembling a PyPI-packaged model if needed.

    Raises
    ------
    WeightsNotFoundError
        When no source has the file; the message lists how to get it.
    WeightsChecksumError
        When the source pins a ``sha256`` and the file's differs.
    """
    tried = []
    for src in spec.weights:
        path = _from_source(src, assemble=True)
        if path is not None:
            if src.sha256 and path.is_file():
                check_sha256(path, src.sha256, model_id=spec.id, source=src.describe())
            return path
        tried.append(src.describe())
    raise WeightsNotFoundError(
        f"No weights found for model {spec.id!r}. Get them by: {_hints(spec)}.",
        model_id=spec.id,
        tried=tried,
    )


def pull(spec: ModelSpec) -> Path:
    """Download a spec's Hugging Face weights (needs internet and huggingface_hub)."""
    for src in spec.weights:
        path = _from_source(src, assemble=True)
        if path is not None:
            return path
    hf = [(s.hf_repo, s.hf_file) for s in spec.weights if s.hf_repo and s.hf_file]
    if not hf:
        raise WeightsNotFoundError(
            f"Model {spec.id!r} has no Hugging Face source to pull from; {_hints(spec)}.",
            model_id=spec.id,
            tried=[s.describe() for s in spec.weights],
        )
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as exc:
        raise JudgelabError(
            "Pulling weights needs huggingface_hub: pip install huggingface_hub"
        ) from exc
    repo, filename = hf[0]
    log.info("downloading %s/%s", repo, filename)
    return Path(hf_hub_download(repo, filename))
