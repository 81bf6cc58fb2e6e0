"""The frozen lower layers run once per prompt: their output is cached between epochs.

When LoRA adapts only the layers from ``first`` up, the hidden state entering
layer ``first`` is a fixed function of the prompt: nothing below it trains.
``SplitForward`` runs the decoder in two passes:

- the **lower pass** runs layers ``0..first-1`` on one prompt at a time
  (no padding, positions 0..n-1) under ``torch.no_grad``, and stops at layer
  ``first``; the hidden state entering it is kept in a ``HiddenCache``;
- the **upper pass** left-pads those hidden states into one batch and runs the
  decoder's own forward from them (``inputs_embeds``), with the lower layers
  skipped, so the attention masks (causal, sliding-window), the rotary
  positions and the final norm are built exactly as in a full forward.

Each prompt's lower pass is computed alone, so a cached hidden state is
bit-for-bit the one a cache miss recomputes: a run resumed with an empty
cache trains the same adapter as an uninterrupted one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from torch import Tensor
    from torch.nn import Module

__all__ = ["HiddenCache", "SplitForward"]

log = logging.getLogger(__name__)


class HiddenCache:
    """Hidden states by prompt (token ids), in memory, up to ``max_bytes``; later prompts are recomputed."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self.refused = 0
        self._store: dict[tuple[int, ...], Tensor] = {}

    def get(self, prompt: Sequence[int]) -> Tensor | None:
        found = self._store.get(tuple(prompt))
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, prompt: Sequence[int], hidden: Tensor) -> None:
        size = hidden.numel() * hidden.element_size()
        if self.bytes + size > self.max_bytes:
            if not self.refused:
                log.info("hidden-state cache full (%d MB): further prompts are recomputed each epoch",
                         self.bytes // 2**20)
            self.refused += 1
            return
        self._store[tuple(prompt)] = hidden
        self.bytes += size

    def __len__(self) -> int:
        return len(self._store)

    def stats(self) -> dict[str, int]:
        return {"prompts": len(self), "bytes": self.bytes, "hits": self.hits, "misses": self.misses,
                "refused": self.refused}


class _Stop(Exception):
    """Raised by the hook at layer ``first``: the lower pass has what it needs."""


@contextmanager
def _skipping(layers: Sequence[Module], as_tuple: bool) -> Iterator[None]:
    """Within the block, ``layers`` pass their input through unchanged (their indices, and so
    their attention types and rotary tables, stay where they are). ``as_tuple``: the layers
    return a tuple (transformers 4.x) rather than a tensor (5.x)."""

    def through(hidden_states: Tensor, *args: object, **kwargs: object) -> Tensor | tuple[Tensor]:
        return (hidden_states,) if as_tuple else hidden_states

    for layer in layers:
        layer.forward = through
    try:
        yield
    finally:
        for layer in layers:
            del layer.forward


class SplitForward:
    """The decoder's last hidden state, with layers below ``first`` run once per prompt and cached."""

    def __init__(self, decoder: Any, first: int, cache: HiddenCache | None) -> None:
        import torch

        self.torch = torch
        self.decoder = decoder
        self.first = first
        self.cache = cache
        self.device = decoder.get_input_embeddings().weight.device
        self.lower = list(decoder.layers[:first])
        self.as_tuple: bool | None = None  # what a decoder layer returns, seen in the first lower pass

    def entering(self, prompt: Sequence[int]) -> Tensor:
        """The (len(prompt), hidden) state entering layer ``first``, from the cache or the lower pass."""
        if self.cache is not None:
            found = self.cache.get(prompt)
            if found is not None:
                return found
        torch = self.torch
        captured: list[Tensor] = []

        def grab(module: Module, args: tuple[Tensor, ...], kwargs: dict[str, Tensor]) -> None:  # torch's forward-pre-hook
            captured.append(args[0] if args else kwargs["hidden_states"])
            raise _Stop

        def seen(module: Module, args: tuple[object, ...], output: object) -> None:
            self.as_tuple = isinstance(output, tuple)

        handle = self.decoder.layers[self.first].register_forward_pre_hook(grab, with_kwargs=True)
        watch = self.lower[0].register_forward_hook(seen)
        ids = torch.tensor([list(prompt)], dtype=torch.long, device=self.device)
        try:
            with torch.no_grad():
                self.decoder(input_ids=ids, attention_mask=torch.ones_like(ids),
                             position_ids=torch.arange(len(prompt), device=self.device)[None], use_cache=False)
        except _Stop:
            pass
        finally:
            handle.remove()
            watch.remove()
        hidden: Tensor = captured[0][0].detach().clone()
        if self.cache is not None:
            self.cache.put(prompt, hidden)
        return hidden

    def last_hidden(self, prompts: Sequence[Sequence[int]]) -> Tensor:
        """A (len(prompts), width, hidden) last hidden state, prompts left-padded as in a full forward."""
        torch = self.torch
        states = [self.entering(p) for p in prompts]
        width = max(len(p) for p in prompts)
        batch = states[0].new_zeros((len(prompts), width, states[0].shape[-1]))
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, state in enumerate(states):
            batch[row, width - len(state):] = state
            mask[row, width - len(state):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        assert self.as_tuple is not None  # every hidden state came from a lower pass of this object
        with _skipping(self.lower, self.as_tuple):
            out = self.decoder(inputs_embeds=batch, attention_mask=mask.to(self.device),
                               position_ids=positions.to(self.device), use_cache=False).last_hidden_state
        return cast("Tensor", out)


def check_split(decoder: Any, split: SplitForward, prompt: Sequence[int], tolerance: float = 1e-4) -> float:
    """The largest difference between the full forward's last hidden state and the split one's, relative
    to the largest value, on ``prompt``; raises when it exceeds ``tolerance``.

    Raises
    ------
    JudgelabError
        When the two-pass forward does not reproduce the full forward for this model.
    """
    import torch

    from judgelab.errors import JudgelabError

    ids = torch.tensor([list(prompt)], dtype=torch.long, device=split.device)
    with torch.no_grad():
        full = decoder(input_ids=ids, attention_mask=torch.ones_like(ids),
                       position_ids=torch.arange(len(prompt), device=split.device)[None],
                       use_cache=False).last_hidden_state.float()
        two_pass = split.last_hidden([prompt]).float()
    error = float((full - two_pass).abs().max() / full.abs().max().clamp(min=1e-12))
    if not error <= tolerance:
        raise JudgelabError(
            f"The cached lower-layer forward does not reproduce the full forward of {type(decoder).__name__} "
            f"(relative difference {error:.2e} > {tolerance:g} on a {len(prompt)}-token prompt). "
            "Train without --cache memory."
        )
    return error
