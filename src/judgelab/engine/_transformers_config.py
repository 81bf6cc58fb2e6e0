"""The transformers backend's settings (``TransformersConfig``) and the check that torch and transformers are there.

Apart from the backend (``_transformers_backend``) so that options can be checked, and a missing extra named,
without importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from judgelab.errors import BackendUnavailableError

__all__ = ["INSTALL_HINT", "TransformersConfig", "import_torch"]

INSTALL_HINT = "pip install 'judgelab[transformers]'"

_DEVICES = ("auto", "cpu", "cuda")
_DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass(frozen=True)
class TransformersConfig:
    """Settings of a model loaded through transformers.

    Parameters
    ----------
    model
        A Hugging Face model folder, a ``.gguf`` file, or a repo id
        (``"google/gemma-3-270m"``; downloaded by transformers when not in
        the local Hugging Face cache).
    gguf_file
        The GGUF file inside ``model`` when ``model`` is a folder or repo
        that holds GGUF files.
    device
        ``"cpu"``, ``"cuda"``, or ``"auto"`` (cuda when available, spread
        over the GPUs with accelerate's ``device_map="auto"``).
    dtype
        ``"float32"``, ``"bfloat16"``, ``"float16"``, or ``"auto"``
        (float32 on CPU, bfloat16 on cuda).
    batch_size
        Prompts per forward pass, or ``"auto"``: as many as fit a token
        budget (4096 padded tokens on CPU, 32768 on cuda).
    n_ctx
        The most tokens one prompt may have.
    n_threads
        torch CPU threads (process-wide); ``None`` keeps torch's setting.
    cache_dir
        Where converted GGUF files are kept; ``None``:
        ``$JUDGELAB_TRANSFORMERS_CACHE`` or ``~/.cache/judgelab/transformers``.
    attn_implementation
        transformers' attention (``"sdpa"``, ``"eager"``...); ``None`` lets
        transformers choose.
    share_prefixes
        Compute a prefix shared by several prompts (a document checked
        against several claims) once, and run only their suffixes, over a
        copy of its key/values (see ``TransformersBackend.label_logits``).
    min_shared_tokens
        The shortest shared prefix worth a forward of its own.
    pack
        Run prompts that share no prefix packed into one row each forward,
        without padding: position ids restart at every prompt and
        transformers masks attention to each prompt's own tokens (its
        packed-sequence detection; with flash attention it runs
        variable-length kernels, with sdpa/eager a dense block-diagonal
        mask). Off by default: not measured on a GPU.
    adapter_path
        A PEFT LoRA adapter folder (``adapter_config.json`` and its weights)
        applied to the model and merged into its weights on load.
    adapter_scale
        The adapter's weight (1.0: as trained).
    """

    model: str
    gguf_file: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int | str = "auto"
    n_ctx: int = 2048
    n_threads: int | None = None
    cache_dir: str | None = None
    attn_implementation: str | None = None
    share_prefixes: bool = True
    min_shared_tokens: int = 32
    pack: bool = False
    adapter_path: str | None = None
    adapter_scale: float = 1.0

    def __post_init__(self) -> None:
        if self.device not in _DEVICES:
            raise ValueError(
                f"The 'device' option of the transformers backend must be one of {_DEVICES}. "
                f"Got {self.device!r} instead."
            )
        if self.dtype not in _DTYPES:
            raise ValueError(
                f"The 'dtype' option of the transformers backend must be one of {_DTYPES}. "
                f"Got {self.dtype!r} instead."
            )
        if not (self.batch_size == "auto" or (isinstance(self.batch_size, int) and self.batch_size >= 1)):
            raise ValueError(
                "The 'batch_size' option of the transformers backend must be 'auto' or an int >= 1. "
                f"Got {self.batch_size!r} instead."
            )
        if self.n_ctx < 1:
            raise ValueError(f"The 'n_ctx' option must be an int >= 1. Got {self.n_ctx!r} instead.")


def import_torch() -> tuple[ModuleType, ModuleType]:
    """torch and transformers, or a BackendUnavailableError naming the extra."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise BackendUnavailableError(
            f"The transformers backend needs torch, transformers and accelerate, which are not "
            f"installed ({exc}). Install them with: {INSTALL_HINT}",
            backend="transformers",
            extra="transformers",
        ) from exc
    if _version_tuple(transformers.__version__) < _MIN_TRANSFORMERS:
        raise BackendUnavailableError(
            f"The transformers backend needs transformers >= "
            f"{'.'.join(map(str, _MIN_TRANSFORMERS))}, found {transformers.__version__}. "
            f"Upgrade it with: {INSTALL_HINT}",
            backend="transformers",
            extra="transformers",
        )
    return torch, transformers


# The first transformers whose from_pretrained takes ``dtype=`` (see pyproject).
_MIN_TRANSFORMERS = (4, 56)


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
