"""A bounded cache of prompt tokenisations, so each prompt is tokenised once.

Evaluators tokenise a prompt to size its chunks and again to judge it, and a
document once per claim; ``evaluate_many`` over thousands of prompts must not
evict a prompt between the two. The cache is bounded by the tokens it holds
(not by entries), keyed by the text, its plain spans and whether BOS is added.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable

__all__ = ["TokenCache"]


class TokenCache:
    """Least-recently-used token ids, at most ``max_tokens`` ids in all.

    ``calls`` counts tokenizer calls made through ``get`` (misses): the
    figure a tokenise-once workload keeps at one per distinct prompt.
    """

    def __init__(self, max_tokens: int = 4_000_000) -> None:
        self.max_tokens = max_tokens
        self._items: OrderedDict[Hashable, array[int]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        self.calls = 0
        self.hits = 0

    def get(self, key: Hashable, tokenize: Callable[[], list[int]]) -> list[int]:
        """The ids cached for ``key``, else ``tokenize()``'s (then cached)."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return found.tolist()
        ids = tokenize()
        stored = array("i", ids)
        with self._lock:
            self.calls += 1
            if key not in self._items and len(stored) <= self.max_tokens:
                self._items[key] = stored
                self._held += len(stored)
                while self._held > self.max_tokens:
                    _, old = self._items.popitem(last=False)
                    self._held -= len(old)
        return list(ids)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._held = 0

    def __len__(self) -> int:
        return len(self._items)
