"""Find a model's weight file from its spec's sources, without downloading.

Sources are tried in the spec's order. Only ``pull`` downloads (from Hugging
Face), and only when a person asks for it (``judgelab models pull ID``).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from judgelab.errors import JudgelabError, WeightsNotFoundError
from judgelab.specs import ModelSpec, WeightSource

__all__ = ["WeightsStatus", "resolve_weights", "weights_status", "pull"]

log = logging.getLogger(__name__)

# assemble() hashes a 250 MB file; do it once per process and path.
_assembled: dict[str, Path] = {}


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
    """
    tried = []
    for src in spec.weights:
        path = _from_source(src, assemble=True)
        if path is not None:
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
