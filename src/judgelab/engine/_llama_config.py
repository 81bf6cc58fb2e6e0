"""The llama.cpp backend's settings: ``LlamaCppConfig``, what a GPU offload changes, and the context parameters.

Apart from the backend (``_llama_backend``) so that its settings can be read, checked and documented without
loading llama.cpp.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = ["LlamaCppConfig", "context_params", "gpu_settings"]


@dataclass(frozen=True)
class LlamaCppConfig:
    """Settings of a loaded GGUF model.

    ``n_ctx`` is the longest prompt accepted; the KV cache holds
    ``n_ctx + n_batch`` cells so that a batch of suffixes fits beside a
    prompt-long shared prefix.

    By default a judgment's numbers do not depend on what else was scored
    with it or what the cache held: every prompt is scored on sequence 0, in
    decode pieces that depend on its own tokens only (they end after a
    newline once ``_CUT_MIN`` tokens long, and after ``piece_tokens`` tokens in
    any case), reusing cached cells only up to a piece bound they were
    computed to in those same pieces; so each token is computed in the same
    decode shape and sits in the KV cell of its own position exactly as when
    the prompt is scored alone, and no kernel's dependence on the batch shape
    or on a cell's SIMD lane can tell the difference. This needs, and the
    defaults are (measured: identical logits, not just close): ``flash_attn=False`` (flash attention tiles the cache
    differently depending on where the cached prefix ended),
    ``repack_weights=False`` (llama.cpp's repacked CPU kernels round rows by
    their position in a 4-row tile) and padding tiny batches (see
    ``LlamaCppBackend._fill``). ``kv_f32=True`` stores K/V in float32
    instead of float16 (twice the cache memory). A 4-bit model turns such
    last-bit differences into differences of 0.1-0.7 in the logits, because
    activations are re-quantised to 8 bits between layers.

    ``packed=True`` trades that for speed: prompts that share a prefix are
    scored together, each suffix on its own sequence in one ``llama_batch``.
    Their tokens then sit in other cells than when scored alone, and
    probabilities move by up to a few hundredths.

    ``label_head=True`` computes label logits from the final hidden state and
    the label tokens' rows of the output matrix (``_label_head``) instead of
    running the full-vocabulary output layer, once the model passed a check
    against the full layer (``LlamaCppBackend.label_head_error``).

    ``piece_tokens`` is the longest decode (at most ``n_batch``): also the
    longest a server waits for an interrupted prompt's piece.

    ``lora_path`` applies a LoRA adapter in llama.cpp's GGUF adapter format
    (``lora_scale`` times its ``alpha / rank``) to every decode.
    """

    model_path: str
    n_ctx: int = 2048
    n_batch: int = 512
    piece_tokens: int = 128
    n_seq_max: int = 64
    n_threads: int | None = None
    n_threads_batch: int | None = None
    n_gpu_layers: int = 0
    flash_attn: bool = False
    kv_f32: bool = False
    packed: bool = False
    repack_weights: bool = False
    label_head: bool = True
    verbose: bool = False
    lora_path: str | None = None
    lora_scale: float = 1.0


def gpu_settings(offloaded: bool, config: LlamaCppConfig) -> tuple[bool, str]:
    """Whether the label head is used, and a log line on what a GPU offload changes.

    On CPU the defaults make a judgment bit-identical however it is batched
    (see ``LlamaCppConfig``). With layers offloaded to a GPU:

    - ``repack_weights`` only concerns CPU weight buffers: moot on the GPU;
    - tiny batches are still padded to ``_MIN_ROWS`` (harmless, and GPU
      matmuls too take other kernels for tiny batches), but CUDA kernels are
      not guaranteed to round alike for every batch shape: answers are close
      across batchings, not bit-identical;
    - the label head is switched off: it reads hidden states through an
      eval callback, which makes llama.cpp stop and copy the GPU graph at
      every node. The full output layer runs on the GPU instead.
    """
    if not offloaded:
        if config.n_gpu_layers:
            return config.label_head, (
                f"n_gpu_layers={config.n_gpu_layers}, but this llama-cpp-python build has no GPU "
                "offload; running on CPU (build it with CMAKE_ARGS=\"-DGGML_CUDA=on\", see docs/gpu.md)"
            )
        return config.label_head, ""
    return False, (
        f"llama.cpp offloads {config.n_gpu_layers if config.n_gpu_layers > 0 else 'all'} layers to the GPU: "
        "label head off (its hidden-state callback would stop the GPU graph at every node); "
        "judgments are close across batchings but not guaranteed bit-identical on GPU kernels"
    )


def context_params(llama_cpp: ModuleType, config: LlamaCppConfig) -> Any:
    """llama.cpp context parameters for ``config``: sizes, threads, one unified KV cache, KV type, flash attention."""
    threads = config.n_threads or max(1, os.cpu_count() or 1)
    cparams = llama_cpp.llama_context_default_params()
    cparams.n_ctx = config.n_ctx + config.n_batch
    cparams.n_batch = config.n_batch
    cparams.n_ubatch = config.n_batch  # one decode = one micro-batch: no tiny leftover splits
    cparams.n_seq_max = config.n_seq_max
    cparams.n_threads = threads
    cparams.n_threads_batch = config.n_threads_batch or threads
    cparams.kv_unified = True  # one cache shared by all sequences: prefixes are copied, not recomputed
    cparams.swa_full = True  # sliding-window layers keep every position, so prefixes can be reused
    cparams.no_perf = True
    if config.kv_f32:
        cparams.type_k = llama_cpp.GGML_TYPE_F32
        cparams.type_v = llama_cpp.GGML_TYPE_F32
    if hasattr(cparams, "flash_attn_type"):
        cparams.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
            if config.flash_attn
            else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
    return cparams
