"""Ordering and packing judgments so that every prompt token is paid for once.

Prompts are deduplicated and sorted by their token ids, so prompts that share
a prefix (the instructions, a document checked against many claims) are
neighbours, and the prompts form a trie. A *batch* is a run of neighbours;
inside it every trie node (a token of a shared prefix) is decoded once, tagged
with the sequence ids of every prompt below it, and each prompt's last token
gives its label logits. Batches hold up to ``n_batch`` tokens, so short
suffixes run at the batched prefill rate instead of one small decode each.

Pure logic over token-id lists: no model here, so it is tested on its own.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "Segment", "chunk_bounds", "common_prefix", "last_bound", "shared_base", "plan_batches", "prefix_groups",
    "segments",
]

Tokens = Sequence[int]


def common_prefix(a: Tokens, b: Tokens) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def chunk_bounds(
    tokens: Tokens, is_cut: Callable[[int], bool], *, min_tokens: int, max_tokens: int
) -> list[int]:
    """Where a prompt's decode pieces end: positions ``b`` in ``(0, len]``, increasing.

    Read left to right from position 0: a piece ends after a *cut* token
    (``is_cut``: a newline) once it holds at least ``min_tokens`` tokens, and
    after ``max_tokens`` tokens in any case. Whether ``b`` is a bound depends
    on ``tokens[:b]`` alone, so two prompts that share a prefix have the same
    bounds inside it: a cached prefix cut back to its last bound holds cells
    computed in exactly the pieces the other prompt would use alone. The
    prompt's last piece runs from its last bound to its end (``len`` itself is
    listed only when it is a bound).
    """
    if not 0 < min_tokens <= max_tokens:
        raise ValueError(f"chunk bounds need 0 < min_tokens <= max_tokens, got {min_tokens} and {max_tokens}")
    bounds: list[int] = []
    start = 0
    for p in range(1, len(tokens) + 1):
        n = p - start
        if n >= max_tokens or (n >= min_tokens and is_cut(tokens[p - 1])):
            bounds.append(p)
            start = p
    return bounds


def last_bound(bounds: Sequence[int], limit: int) -> int:
    """The largest of ``0`` and ``bounds`` that is at most ``limit``."""
    return bounds[bisect_right(bounds, limit) - 1] if bounds and bounds[0] <= limit else 0


def shared_base(sorted_prompts: Sequence[Tokens]) -> int:
    """Tokens shared by every prompt, leaving each at least one token to score.

    For sorted lists the common prefix of all is that of the first and last.
    """
    if not sorted_prompts:
        return 0
    first, last = sorted_prompts[0], sorted_prompts[-1]
    shortest = min(len(p) for p in sorted_prompts)
    return max(0, min(common_prefix(first, last), shortest - 1))


@dataclass(frozen=True)
class Segment:
    """Tokens ``[start, end)`` of prompt ``owner``, shared by prompts ``members``.

    ``members`` are indices into the sorted prompt list (``owner`` first);
    ``logits_for`` is the prompt whose label logits are read at the last
    token (None when the segment does not end a prompt).
    """

    owner: int
    members: tuple[int, ...]
    start: int
    end: int
    logits_for: int | None


def segments(sorted_prompts: Sequence[Tokens], lo: int, hi: int, base: int) -> list[Segment]:
    """The trie of prompts ``lo..hi-1`` above ``base``, as decode segments.

    Prompt ``i`` contributes its tokens after what it shares with prompt
    ``i-1`` (after ``base`` for the first); each of those tokens is also
    tagged with the later prompts that share it. Prompts must be sorted and
    distinct.
    """
    lcp = [common_prefix(sorted_prompts[i - 1], sorted_prompts[i]) for i in range(lo + 1, hi)]
    out: list[Segment] = []
    for i in range(lo, hi):
        length = len(sorted_prompts[i])
        start = base if i == lo else max(base, lcp[i - lo - 1])
        # later prompts sharing this one's tokens: (shared length, index), non-increasing
        sharers: list[tuple[int, int]] = []
        shared = length
        for j in range(i + 1, hi):
            shared = min(shared, lcp[j - lo - 1])
            if shared <= start:
                break
            sharers.append((shared, j))
        pos, k = start, len(sharers)
        while pos < length:
            while k and sharers[k - 1][0] <= pos:
                k -= 1
            end = min(sharers[k - 1][0], length) if k else length
            members = (i,) + tuple(j for _, j in sharers[:k])
            out.append(Segment(i, members, pos, end, i if end == length else None))
            pos = end
    return out


def plan_batches(
    sorted_prompts: Sequence[Tokens], base: int, *, n_batch: int, max_seqs: int
) -> list[tuple[int, int]]:
    """Cut sorted, distinct prompts into ``(lo, hi)`` runs of at most
    ``max_seqs`` prompts whose new tokens number at most ``n_batch``.

    A single prompt with more new tokens than that gets a run of its own
    (the backend decodes it in several steps).
    """
    runs: list[tuple[int, int]] = []
    lo, n = 0, len(sorted_prompts)
    while lo < n:
        cost = len(sorted_prompts[lo]) - base
        hi = lo + 1
        while hi < n and hi - lo < max_seqs:
            extra = len(sorted_prompts[hi]) - common_prefix(sorted_prompts[hi - 1], sorted_prompts[hi])
            if cost + extra > n_batch:
                break
            cost += extra
            hi += 1
        runs.append((lo, hi))
        lo = hi
    return runs


def prefix_groups(sorted_prompts: Sequence[Tokens], *, min_shared: int) -> list[tuple[int, int, int]]:
    """Cut sorted prompts into ``(lo, hi, shared)`` runs that share their first ``shared`` tokens.

    A run grows while growing it does not lower the tokens it saves,
    ``(members - 1) * shared``; so ten claims about one document form one run
    (the document is their shared prefix) rather than joining the next
    document's claims over the instructions alone. Each member keeps at
    least one token after the prefix. A run of one prompt, or one whose
    prefix is shorter than ``min_shared``, has ``shared = 0``.
    """
    runs: list[tuple[int, int, int]] = []
    n = len(sorted_prompts)
    lo = 0
    while lo < n:
        shared = len(sorted_prompts[lo]) - 1
        hi = lo + 1
        while hi < n:
            candidate = min(
                shared,
                common_prefix(sorted_prompts[hi - 1], sorted_prompts[hi]),
                len(sorted_prompts[hi]) - 1,
            )
            members = hi - lo + 1
            if candidate < min_shared or (members - 1) * candidate < (members - 2) * shared:
                break
            shared = candidate
            hi += 1
        runs.append((lo, hi, shared if hi - lo > 1 and shared >= min_shared else 0))
        lo = hi
    return runs
