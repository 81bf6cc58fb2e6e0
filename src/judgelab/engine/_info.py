"""``ModelInfo``: the facts about a loaded judge that servers and reports show."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ModelInfo"]


@dataclass(frozen=True)
class ModelInfo:
    """What a loaded ``JudgeModel`` is, as plain values (see ``JudgeModel.info``).

    ``prompt_template`` is the template prompts are rendered with: the spec's
    ``raw_template`` for raw-style specs, else the spec's or the weights' chat
    template. ``chat_template`` is the weights' own (``None`` when they ship
    none). ``n_params`` and ``size_bytes`` are ``None`` when the backend
    cannot tell.
    """

    id: str
    family: str
    format: str
    backend: str
    n_ctx: int
    architecture: str
    n_params: int | None
    quantization: str
    size_bytes: int | None
    device: str
    prompt_style: str
    prompt_template: str
    chat_template: str | None
    system: str
    spec_hash: str
    description: str = ""

    @property
    def parameter_size(self) -> str:
        """``n_params`` the way model hubs write it (``"268M"``, ``"7.6B"``; '' when unknown)."""
        if not self.n_params:
            return ""
        for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
            if self.n_params >= scale:
                value = self.n_params / scale
                return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
        return str(self.n_params)
