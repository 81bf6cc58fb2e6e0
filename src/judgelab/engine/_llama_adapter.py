"""A LoRA adapter (llama.cpp's GGUF adapter format) applied to a llama.cpp context.

llama.cpp adds ``scale * alpha / rank * B @ A`` to each adapted weight's
product at every decode; the base weights stay as they are, so the label
head (which reads the final hidden state and the unchanged output layer)
still applies and is checked against the full output layer as before.
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path
from types import ModuleType

from judgelab.errors import JudgelabError

__all__ = ["LoraHandle", "attach_lora"]

log = logging.getLogger(__name__)


class LoraHandle:
    """A loaded adapter; kept alive as long as the context that uses it."""

    def __init__(self, llama_cpp: ModuleType, adapter: object, path: Path, scale: float) -> None:
        self._ll = llama_cpp
        self.adapter = adapter
        self.path = path
        self.scale = scale

    def free(self) -> None:
        """Release the adapter (after its context is closed); newer llama.cpp frees it with the model."""
        free = getattr(self._ll, "llama_adapter_lora_free", None)
        if self.adapter and free is not None:
            try:
                free(self.adapter)
            except Exception as exc:  # pragma: no cover - deprecated no-op in some builds
                log.debug("llama_adapter_lora_free: %s", exc)
        self.adapter = None


def attach_lora(llama_cpp: ModuleType, model: object, ctx: object, path: str | Path, scale: float) -> LoraHandle:
    """Load the adapter at ``path`` for ``model`` and apply it to ``ctx`` with ``scale``.

    Raises
    ------
    JudgelabError
        When the file is missing, llama.cpp refuses it (another
        architecture, shapes that do not match the base), or this
        llama-cpp-python has no adapter API.
    """
    path = Path(path)
    if not path.is_file():
        raise JudgelabError(f"LoRA adapter file not found: {path}. Check the spec's [adapter] gguf path.")
    init = getattr(llama_cpp, "llama_adapter_lora_init", None)
    if init is None:
        raise JudgelabError(
            "This llama-cpp-python has no LoRA adapter API (llama_adapter_lora_init); "
            "upgrade it: pip install -U llama-cpp-python"
        )
    adapter = init(model, str(path).encode("utf-8"))
    if not adapter:
        raise JudgelabError(
            f"llama.cpp could not load the LoRA adapter {path}: it must be a GGUF adapter "
            "(general.type = adapter) for this base model's architecture and shapes."
        )
    handle = LoraHandle(llama_cpp, adapter, path, float(scale))
    many = getattr(llama_cpp, "llama_set_adapters_lora", None)
    if many is not None:  # llama.cpp sets all of a context's adapters at once
        adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(adapter)
        scales = (ctypes.c_float * 1)(scale)
        rc = many(ctx, adapters, 1, scales)
    else:  # older llama-cpp-python
        rc = llama_cpp.llama_set_adapter_lora(ctx, adapter, ctypes.c_float(scale))
    if rc not in (0, None):
        handle.free()
        raise JudgelabError(f"llama.cpp could not apply the LoRA adapter {path} (code {rc}).")
    log.info("LoRA adapter %s applied (scale %g)", path, scale)
    return handle
