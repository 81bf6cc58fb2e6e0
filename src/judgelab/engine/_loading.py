"""``load_model``: a model id, spec file or weights path in, a ``BackendJudgeModel`` (a ``JudgeModel``) out."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.engine._model import BackendJudgeModel
from judgelab.errors import BackendUnavailableError, SpecError
from judgelab.specs import ModelSpec, PromptFormat, WeightSource, load_spec
from judgelab.weights import resolve_weights

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from judgelab.engine._llama_backend import LlamaCppBackend
    from judgelab.engine._transformers_backend import TransformersBackend

__all__ = ["load_model", "BACKENDS", "adapter_file"]

log = logging.getLogger(__name__)

# backend name -> "module:function" building a Backend from (spec, weights path, options)
BACKENDS: dict[str, str] = {
    "llama_cpp": "judgelab.engine._loading:_build_llama_cpp",
    "transformers": "judgelab.engine._loading:_build_transformers",
    "remote": "judgelab.engine._remote_loading:load_remote",
}


def _spec_for_weights(path: Path) -> ModelSpec:
    """An ad-hoc spec for a bare weights file: chat template if it has one."""
    return ModelSpec(
        id=path.stem,
        family="unknown",
        description=f"ad-hoc spec for {path}",
        format="gguf" if path.suffix == ".gguf" else "hf",
        backends=["llama_cpp", "transformers"],
        weights=[WeightSource(path=str(path))],
        prompt=PromptFormat(style="chat"),
        source_path=None,
    )


def _backend_options(
    config_cls: type[DataclassInstance], path_field: str, backend: str, spec: ModelSpec, options: dict[str, Any]
) -> dict[str, Any]:
    """Check ``options`` against a backend's config fields; default n_ctx from the spec."""
    known = {f.name for f in dataclasses.fields(config_cls)} - {path_field}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"Unknown option(s) {unknown} for the {backend} backend; known: {sorted(known)}")
    return {"n_ctx": spec.context_length, **options}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def adapter_file(spec: ModelSpec, kind: str, backend: str) -> Path | None:
    """The spec's adapter for a backend (``gguf`` or ``peft``), checked; None without an ``[adapter]``.

    Raises
    ------
    SpecError
        When the spec has an adapter but none for this backend, the file is
        missing, or its sha256 is not the one the spec records.
    """
    if spec.adapter is None:
        return None
    path = spec.adapter_path(kind)  # type: ignore[arg-type]
    where = spec.source_path or spec.id
    if path is None:
        raise SpecError(f"Model {spec.id!r} ({where}) has an [adapter] without `{kind}`, which the "
                        f"{backend} backend needs; use the other backend or add the {kind} adapter.",
                        path=spec.source_path)
    weights_file = path / "adapter_model.safetensors" if kind == "peft" else path
    if not weights_file.is_file():
        raise SpecError(f"Adapter file {weights_file} of model {spec.id!r} ({where}) not found.",
                        path=spec.source_path)
    expected = getattr(spec.adapter, f"{kind}_sha256")
    if expected and _sha256(weights_file) != expected:
        raise SpecError(f"Adapter file {weights_file} of model {spec.id!r} does not match the sha256 "
                        f"its spec records ({expected[:12]}...); restore the file or update the spec.",
                        path=spec.source_path)
    return path


def _build_llama_cpp(spec: ModelSpec, weights: Path, options: dict[str, Any]) -> LlamaCppBackend:
    from judgelab.engine._llama_backend import LlamaCppBackend
    from judgelab.engine._llama_config import LlamaCppConfig

    options = _backend_options(LlamaCppConfig, "model_path", "llama_cpp", spec, options)
    lora = adapter_file(spec, "gguf", "llama_cpp")
    if lora is not None and spec.adapter is not None:
        options = {"lora_path": str(lora), "lora_scale": spec.adapter.scale, **options}
    return LlamaCppBackend(LlamaCppConfig(model_path=str(weights), **options))


def _build_transformers(spec: ModelSpec, weights: Path | str, options: dict[str, Any]) -> TransformersBackend:
    from judgelab.engine._transformers_backend import TransformersBackend
    from judgelab.engine._transformers_config import TransformersConfig, import_torch

    import_torch()  # BackendUnavailableError naming the extra, before anything else
    options = _backend_options(TransformersConfig, "model", "transformers", spec, options)
    peft = adapter_file(spec, "peft", "transformers")
    if peft is not None and spec.adapter is not None:
        options = {"adapter_path": str(peft), "adapter_scale": spec.adapter.scale, **options}
    return TransformersBackend(TransformersConfig(model=str(weights), **options))


def _load_remote(spec: ModelSpec, backend: str, options: Mapping[str, object]) -> BackendJudgeModel:
    """A spec with a ``[remote]`` table is asked over HTTP whatever ``backend`` says (the CLI's default)."""
    if backend not in ("remote", "llama_cpp"):
        log.warning("model %s is a remote judge; ignoring backend=%r", spec.id, backend)
    module_name, func_name = BACKENDS["remote"].split(":")
    model: BackendJudgeModel = getattr(importlib.import_module(module_name), func_name)(spec, dict(options))
    return model


def load_model(id_or_path: str | Path, backend: str = "llama_cpp", **options: Any) -> BackendJudgeModel:
    """Load a judge model once, ready to answer questions with probabilities.

    Parameters
    ----------
    id_or_path
        A model spec id (``"gemma-3-270m"``, see ``judgelab models``), a spec
        ``.toml`` path, a weights file (``.gguf``) used with an ad-hoc spec, or
        a remote judge (a spec with a ``[remote]`` table, or the short form
        ``openai:http://127.0.0.1:8080/v1#name``; see ``docs/remote.md``).
    backend
        ``"llama_cpp"`` (GGUF, in process) or ``"transformers"`` (torch; needs
        ``pip install 'judgelab[transformers]'``). A remote judge always uses
        ``"remote"``.
    **options
        Backend options, e.g. ``n_ctx``, ``n_threads``, ``n_gpu_layers``,
        ``n_batch``, ``n_seq_max``, ``flash_attn`` for llama_cpp; ``device``,
        ``dtype``, ``batch_size``, ``n_ctx``, ``n_threads``, ``gguf_file``,
        ``cache_dir`` for transformers (see ``docs/transformers.md``);
        ``concurrency``, ``timeout``, ``max_retries``, ``api_key``, ``check``
        for remote judges. With
        ``backend="transformers"``, ``id_or_path`` may also be a Hugging Face
        model folder or a repo id (``"owner/name"``).
    """
    text = str(id_or_path)
    path = Path(text).expanduser()
    weights: Path | str
    if path.suffix in {".gguf", ".safetensors"} or (path.is_dir() and (path / "config.json").exists()):
        if not path.exists():
            raise SpecError(f"Weights file not found: {path}")
        spec, weights = _spec_for_weights(path), path
    elif backend == "transformers" and text.count("/") == 1 and not text.endswith(".toml"):
        # a Hugging Face repo id ("google/gemma-3-270m"), read by transformers itself
        spec = _spec_for_weights(Path(text)).model_copy(
            update={"id": text, "format": "hf", "description": f"ad-hoc spec for {text}"}
        )
        weights = text
    else:
        spec = load_spec(text)
        if spec.remote is not None:
            return _load_remote(spec, backend, options)
        if backend not in spec.backends:
            raise BackendUnavailableError(
                f"Model {spec.id!r} does not support backend {backend!r}; its spec lists "
                f"{spec.backends}.",
                backend=backend,
            )
        weights = resolve_weights(spec)
    if backend not in BACKENDS or backend == "remote":
        raise BackendUnavailableError(
            f"Unknown backend {backend!r} for {spec.id}; available: {sorted(set(BACKENDS) - {'remote'})} "
            "(remote judges are named by a spec with a [remote] table or SCHEME:URL#MODEL).", backend=backend
        )
    module_name, func_name = BACKENDS[backend].split(":")
    build = getattr(importlib.import_module(module_name), func_name)
    log.info("loading %s (%s) with %s", spec.id, weights, backend)
    be = build(spec, weights, dict(options))
    if spec.prompt.style == "chat" and not spec.prompt.chat_template and not be.chat_template():
        spec = spec.model_copy(update={"prompt": spec.prompt.model_copy(update={"style": "raw"})})
    return BackendJudgeModel(be, spec)
