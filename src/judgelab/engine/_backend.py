"""The protocol every engine backend implements.

A backend owns a loaded model: tokenisation, the chat template, and the one
numeric call judgelab needs, ``label_logits``: the logits of a few token ids at
the last position of each prompt. Everything above (label pooling, softmax,
restricted decoding) is backend-independent and lives in ``JudgeModel``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Backend", "BackendFacts", "Prefilling"]


@dataclass(frozen=True)
class BackendFacts:
    """What a backend knows about the weights it loaded.

    ``architecture`` is the weights' own name for it (``"gemma3"``);
    ``quantization`` the storage type (``"Q4_K_M"``, ``"bfloat16"``);
    ``n_params`` and ``size_bytes`` are ``None`` when unknown.
    """

    architecture: str = ""
    n_params: int | None = None
    quantization: str = ""
    size_bytes: int | None = None
    device: str = "cpu"
    tokenizer: str = ""
    """The tokenizer's library and version (``"transformers 5.24.0"``), for error messages."""


class Backend(Protocol):
    """A loaded model that can score label tokens after a prompt."""

    name: str
    n_ctx: int
    """The most tokens one prompt may have."""
    @property
    def tokens_evaluated(self) -> int:
        """Prompt tokens actually run through the model so far (cached prefixes excluded)."""
        ...

    def facts(self) -> BackendFacts:
        """Architecture, parameter count, quantisation and size of the loaded weights."""
        ...

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        """Token ids of ``text``.

        With ``special`` (the default), control-token text (``<start_of_turn>``)
        becomes the control token; without, it is tokenised as plain text.
        """
        ...

    def tokenize_pieces(self, pieces: Sequence[tuple[str, bool]], *, add_bos: bool) -> list[int]:
        """Token ids of ``(text, parse_special)`` pieces, read as one text.

        Control tokens come only from pieces with ``parse_special``; the others
        are plain text. Where the plain pieces hold no control-token text, the
        ids equal ``tokenize(whole text, special=True)``.
        """
        ...

    def token_text(self, token_id: int) -> str:
        """The text piece of one token."""
        ...

    def bos_text(self) -> str:
        """The beginning-of-sequence token's text ('' when the model has none)."""
        ...

    def eos_text(self) -> str:
        """The end-of-sequence (or end-of-turn) token's text."""
        ...

    def chat_template(self) -> str | None:
        """The model's own Jinja chat template, if it ships one."""
        ...

    def label_logits(
        self, prompts: Sequence[Sequence[int]], token_ids: Sequence[int]
    ) -> npt.NDArray[np.float64]:
        """Logits of ``token_ids`` at the last position of each prompt.

        Returns an array of shape ``(len(prompts), len(token_ids))``, float64.
        Must give the same numbers (to rounding) whatever the order, batching
        or cache state, and be safe to call from several threads.
        """
        ...

    def next_logits(self, tokens: Sequence[int]) -> npt.NDArray[np.float64]:
        """Full-vocabulary logits (float64) at the last position of ``tokens``."""
        ...

    def is_end_of_generation(self, token_id: int) -> bool:
        """Whether the token ends a turn (EOS, EOT, <end_of_turn>...)."""
        ...

    def detokenize(self, token_ids: Sequence[int]) -> str:
        """Text of generated tokens (special tokens dropped)."""
        ...

    def reset_cache(self) -> None:
        """Forget every cached prefix (KV cache); results never depend on it."""
        ...

    def close(self) -> None:
        """Free the model."""
        ...


@runtime_checkable
class Prefilling(Protocol):
    """A backend that can evaluate a prompt in pieces ahead of judging it (llama.cpp, unpacked)."""

    supports_prefill: bool

    def prefill(self, tokens: Sequence[int], max_tokens: int) -> int:
        """Evaluate up to ``max_tokens`` more of ``tokens``; returns how many are still to do."""
        ...
