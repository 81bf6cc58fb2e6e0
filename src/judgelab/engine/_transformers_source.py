"""Where the transformers backend loads from: a model folder, a repo id or a converted GGUF, and a merged LoRA adapter."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.engine._transformers_config import TransformersConfig
from judgelab.errors import BackendUnavailableError, JudgelabError

if TYPE_CHECKING:
    from transformers import PreTrainedModel

__all__ = ["PEFT_HINT", "merged_adapter", "resolve_source"]

log = logging.getLogger(__name__)


PEFT_HINT = "pip install 'judgelab[tune]'"


def merged_adapter(model: PreTrainedModel, path: str, scale: float) -> PreTrainedModel:
    """``model`` with the PEFT LoRA adapter in ``path`` merged into its weights."""
    try:
        from peft import PeftModel
        from peft.tuners.lora import LoraLayer
    except ImportError as exc:
        raise BackendUnavailableError(
            f"Loading a LoRA adapter on the transformers backend needs peft ({exc}). "
            f"Install it with: {PEFT_HINT}",
            backend="transformers",
            extra="tune",
        ) from exc
    if not (Path(path) / "adapter_config.json").is_file():
        raise JudgelabError(f"{path} is not a PEFT adapter folder (no adapter_config.json). "
                            "Check the spec's [adapter] peft path.")
    wrapped = PeftModel.from_pretrained(model, path)
    if scale != 1.0:
        for module in wrapped.modules():
            if isinstance(module, LoraLayer):
                for name in list(module.scaling):
                    module.set_scale(name, scale)
    log.info("PEFT adapter %s merged (scale %g)", path, scale)
    merged: PreTrainedModel = wrapped.merge_and_unload()
    return merged


def resolve_source(config: TransformersConfig) -> str:
    """A local model folder or repo id for ``from_pretrained`` (GGUFs converted via the cache)."""
    from judgelab.engine._hf_cache import converted_folder

    root = Path(config.cache_dir).expanduser() if config.cache_dir else None
    path = Path(config.model).expanduser()
    if config.gguf_file:
        gguf = path / config.gguf_file
        if not gguf.is_file():
            if path.exists():
                raise JudgelabError(f"GGUF file {config.gguf_file!r} not found in {path}.")
            try:
                from huggingface_hub import hf_hub_download

                gguf = Path(hf_hub_download(config.model, config.gguf_file))
            except Exception as exc:  # network, auth, missing file: all the same to the user
                raise JudgelabError(
                    f"Could not get {config.gguf_file!r} from the Hugging Face repo "
                    f"{config.model!r}: {exc}. Download it and pass the .gguf path instead."
                ) from exc
        return str(converted_folder(gguf, root))
    if path.suffix == ".gguf":
        if not path.is_file():
            raise JudgelabError(f"GGUF file not found: {path}")
        return str(converted_folder(path, root))
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise JudgelabError(
                f"{path} is not a Hugging Face model folder (no config.json). Pass a folder "
                "written by save_pretrained, a .gguf file, or a repo id."
            )
        return str(path)
    return config.model  # a repo id
