"""Keeping a partly evaluated prompt's KV cache while other prompts use sequence 0.

The llama.cpp backend scores every prompt on sequence 0, which holds the last
prompt (see ``_llama_backend``). A long prompt can be evaluated in pieces
(``LlamaCppBackend.prefill``) so that a scheduler can run other requests
between them; until its last piece it is *resumable*. When another prompt is
about to cut sequence 0 short, the resumable prompt's cells are first tagged
with a parking sequence id (``llama_memory_seq_cp``: in the unified cache
this copies no data), so they stay in the cache; when the prompt comes back,
its cells are tagged with sequence 0 again and only the rest of it is
evaluated. No token is computed twice, unless the cache has no room for the
parked prompts beside a new one: then the oldest park is dropped (its tokens
are evaluated again later; ``recomputable`` counts them).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from judgelab.engine._schedule import common_prefix

__all__ = ["Parking"]

log = logging.getLogger(__name__)


class Parking:
    """Parked prefixes of resumable prompts, each on its own sequence id.

    Parameters
    ----------
    ll
        The ``llama_cpp`` module (its ``llama_memory_seq_*`` calls).
    memory
        Returns the context's memory handle.
    seq_ids
        Sequence ids free for parking (never 0, never the padding sequence).
    capacity
        Cells of the KV cache.
    """

    def __init__(self, ll: Any, memory: Callable[[], Any], seq_ids: Sequence[int], capacity: int) -> None:
        self._ll = ll
        self._memory = memory
        self._free = list(seq_ids)
        self._parked: OrderedDict[int, list[int]] = OrderedDict()  # seq id -> tokens, oldest first
        self.capacity = capacity
        self.dropped_tokens = 0  # tokens of dropped parks (evaluated again if their prompt comes back)

    @property
    def tokens(self) -> int:
        """Tokens held by parked prefixes (shared prefixes counted once per park)."""
        return sum(len(t) for t in self._parked.values())

    def __len__(self) -> int:
        return len(self._parked)

    def park(self, tokens: list[int], *, evict: bool = True) -> bool:
        """Keep sequence 0's cells ``[0, len(tokens))`` under a parking id; False when none is free.

        With ``evict`` the oldest park makes way when every id is taken.
        """
        if not tokens:
            return False
        if not self._free and evict:
            self.dropped_tokens += len(next(iter(self._parked.values())))
            self._drop(next(iter(self._parked)))
        if not self._free:
            return False
        seq = self._free.pop()
        mem = self._memory()
        self._ll.llama_memory_seq_rm(mem, seq, -1, -1)
        self._ll.llama_memory_seq_cp(mem, 0, seq, 0, len(tokens))
        self._parked[seq] = list(tokens)
        log.debug("parked %d tokens on sequence %d", len(tokens), seq)
        return True

    def best(self, tokens: Sequence[int]) -> tuple[int, int] | None:
        """``(seq, shared)`` of the park sharing the longest prefix with ``tokens``, or None."""
        best: tuple[int, int] | None = None
        for seq, parked in self._parked.items():
            shared = common_prefix(parked, tokens)
            if shared and (best is None or shared > best[1]):
                best = (seq, shared)
        return best

    def restore(self, seq: int) -> list[int]:
        """Make sequence 0 hold the parked prefix of ``seq`` (sequence 0's own cells are dropped); its tokens."""
        mem = self._memory()
        tokens = self._parked.pop(seq)
        self._ll.llama_memory_seq_rm(mem, 0, -1, -1)
        self._ll.llama_memory_seq_cp(mem, seq, 0, 0, len(tokens))
        self._ll.llama_memory_seq_rm(mem, seq, -1, -1)
        self._free.append(seq)
        log.debug("restored %d parked tokens from sequence %d", len(tokens), seq)
        return tokens

    def make_room(self, in_use: int) -> None:
        """Drop the oldest parks until ``in_use`` cells (sequence 0's and the new ones) fit beside the rest."""
        while self._parked and in_use + self.tokens > self.capacity:
            seq = next(iter(self._parked))
            log.info("KV cache full: dropping a parked prefix of %d tokens (it is evaluated again if needed)",
                     len(self._parked[seq]))
            self.dropped_tokens += len(self._parked[seq])
            self._drop(seq)

    def _drop(self, seq: int) -> None:
        self._ll.llama_memory_seq_rm(self._memory(), seq, -1, -1)
        del self._parked[seq]
        self._free.append(seq)

    def forget(self) -> None:
        """Forget every park without touching the cache (after the cache was cleared)."""
        self._free.extend(self._parked)
        self._parked.clear()

    def clear(self) -> None:
        """Drop every park from the cache."""
        for seq in list(self._parked):
            self._drop(seq)
