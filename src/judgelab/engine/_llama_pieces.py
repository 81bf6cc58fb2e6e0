"""Decode pieces of the llama.cpp backend: runs of tokens of one or more sequences, cut into ``llama_batch`` steps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["DecodePiece", "decode_steps"]


@dataclass(frozen=True)
class DecodePiece:
    """Consecutive tokens of one or more sequences, starting at position ``start``.

    ``member`` is the prompt whose label logits are read at the piece's last
    token (None: no logits); ``last`` is False for all but the final step of
    a suffix split across steps.
    """

    seqs: tuple[int, ...]
    tokens: Sequence[int]
    start: int
    member: int | None
    last: bool = True


def decode_steps(pieces: list[DecodePiece], n_batch: int) -> list[list[DecodePiece]]:
    """Cut pieces into decode steps of at most ``n_batch`` tokens, in order.

    A piece longer than a step is split; only its final part reads logits.
    """
    steps: list[list[DecodePiece]] = [[]]
    room = n_batch
    for piece in pieces:
        tokens, start = list(piece.tokens), piece.start
        while tokens:
            if room == 0:
                steps.append([])
                room = n_batch
            take = tokens[:room]
            tokens = tokens[room:]
            steps[-1].append(DecodePiece(piece.seqs, take, start, piece.member, not tokens))
            start += len(take)
            room -= len(take)
    return [s for s in steps if s]
