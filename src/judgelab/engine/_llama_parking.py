"""Keeping a partly evaluated prompt's KV cache while other prompts use sequence 0.

The llama.cpp backend scores every prompt on sequence 0, which holds the last
prompt (see ``_llama_backend``). A long prompt can be evaluated in pieces
(``LlamaCppBackend.prefill``) so that a scheduler can run other requests
between them; until its last piece it is *resumable*. When another prompt is
about to cut sequence 0 short, the resumable prompt's cells are first copied
out of the cache into host memory (``llama_state_seq_get_data``); when the
prompt comes back, the cache is cleared and its cells are copied back in
(``llama_state_seq_set_data``), and only the rest of it is evaluated.

Why host memory and not another sequence id in the cache: a judgment is the
same only when each of its tokens sits in the KV cell of its own position, as
when the prompt is scored alone. Cells held by a parked sequence push the
next prompt's tokens to other cells, and llama.cpp's attention sums over
cells in SIMD groups (8 or 16 wide), so a shifted prompt is summed in another
order: on an AVX-512 CPU a short prompt judged while a long one was parked in
the cache moved from P(Yes) = 0.8739 to 0.8628. Copied out, a park holds no
cell, and restored into an empty cache its cells land at their positions again.

No token is computed twice, unless the parks would hold more tokens than the
cache has cells: then the oldest park is dropped (its tokens are evaluated
again later; ``dropped_tokens`` counts them).
"""

from __future__ import annotations

import ctypes
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType

from judgelab.engine._schedule import common_prefix

__all__ = ["Parking", "Park"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Park:
    """A parked prefix: its tokens, how many lead in exact pieces (``clean``), and sequence 0's saved state."""

    tokens: list[int]
    clean: int
    state: ctypes.Array[ctypes.c_uint8]  # the bytes llama_state_seq_get_data wrote


class Parking:
    """Parked prefixes of resumable prompts, in host memory, oldest first.

    Parameters
    ----------
    ll
        The ``llama_cpp`` module (its ``llama_state_seq_*`` and ``llama_memory_*`` calls).
    context
        Returns the llama context handle.
    memory
        Returns the context's memory handle.
    slots
        The most prompts parked at once.
    capacity
        The most tokens parked in all (the cache's cells: host memory for one full cache).
    """

    def __init__(self, ll: ModuleType, context: Callable[[], object], memory: Callable[[], object], slots: int,
                 capacity: int) -> None:
        self._ll = ll
        self._context = context
        self._memory = memory
        self.slots = slots
        self.capacity = capacity
        self._parked: OrderedDict[int, Park] = OrderedDict()  # key -> park, oldest first
        self._next = 0
        self.dropped_tokens = 0  # tokens of dropped parks (evaluated again if their prompt comes back)

    @property
    def tokens(self) -> int:
        """Tokens held by parked prefixes (shared prefixes counted once per park)."""
        return sum(len(p.tokens) for p in self._parked.values())

    def __len__(self) -> int:
        return len(self._parked)

    def park(self, tokens: list[int], clean: int, *, evict: bool = True) -> bool:
        """Copy sequence 0 (which holds exactly ``tokens``) to host memory; False when not kept.

        With ``evict`` the oldest parks make way for this one; without, it is
        kept only when it fits beside them.
        """
        if not tokens or len(tokens) > self.capacity:
            return False
        while self._parked and (len(self._parked) >= self.slots or self.tokens + len(tokens) > self.capacity):
            if not evict:
                return False
            key, old = next(iter(self._parked.items()))
            log.info("dropping a parked prefix of %d tokens (it is evaluated again if needed)", len(old.tokens))
            self.dropped_tokens += len(old.tokens)
            del self._parked[key]
        ctx = self._context()
        size = int(self._ll.llama_state_seq_get_size(ctx, 0))
        state = (ctypes.c_uint8 * size)()
        if int(self._ll.llama_state_seq_get_data(ctx, state, size, 0)) != size:
            log.info("llama.cpp could not copy out a prefix of %d tokens; it is evaluated again if needed", len(tokens))
            return False
        self._parked[self._next] = Park(list(tokens), clean, state)
        self._next += 1
        log.debug("parked %d tokens in host memory (%d bytes)", len(tokens), size)
        return True

    def best(self, tokens: Sequence[int]) -> tuple[int, int] | None:
        """``(key, shared)`` of the park sharing the longest prefix with ``tokens``, or None."""
        best: tuple[int, int] | None = None
        for key, park in self._parked.items():
            shared = common_prefix(park.tokens, tokens)
            if shared and (best is None or shared > best[1]):
                best = (key, shared)
        return best

    def restore(self, key: int) -> Park | None:
        """Make the cache hold exactly the park ``key`` on sequence 0, each token in the cell of its position.

        Everything else in the cache is dropped first (the caller parks
        sequence 0 beforehand when it must be kept). None, with the cache
        left empty, when llama.cpp refuses the saved state.
        """
        park = self._parked.pop(key)
        self._ll.llama_memory_clear(self._memory(), False)  # empty, and the next free cell is cell 0
        size = len(park.state)
        if int(self._ll.llama_state_seq_set_data(self._context(), park.state, size, 0)) != size:
            self._ll.llama_memory_clear(self._memory(), False)
            log.warning("llama.cpp could not restore a parked prefix of %d tokens; it is evaluated again",
                        len(park.tokens))
            self.dropped_tokens += len(park.tokens)
            return None
        log.debug("restored %d parked tokens", len(park.tokens))
        return park

    def forget(self) -> None:
        """Drop every park."""
        self._parked.clear()

    clear = forget
