"""``RemoteBackend``: what the ``Backend`` protocol can say about a judge on another machine.

A remote judge has no tokenizer and no logits here: the server owns both.
The backend answers the protocol's facts (name, context, template) and
counts tokens, which evaluators use to size document chunks and check the
context: with the served model's own tokenizer where the server exposes one
(``POST /tokenize`` at the server's root, as ``judgelab serve`` and
llama.cpp's server do; ``ServedTokenizer``), so that long documents are cut
into the chunks the model in process reads, and by an estimate otherwise.
The server's own token counts come back with every answer
(``RemoteJudgeModel.usage``). The numeric calls (``label_logits``,
``next_logits``) are refused: a remote judge is asked by text
(``RemoteJudgeModel.judge_many``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from judgelab.engine._backend import BackendFacts
from judgelab.engine._remote_tokens import ServedTokenizer
from judgelab.errors import JudgelabError
from judgelab.specs import RemoteSpec

if TYPE_CHECKING:
    from judgelab.engine._remote_client import RemoteClient

__all__ = ["RemoteBackend", "estimate_tokens"]

_PIECES = re.compile(r"\w+|[^\w\s]|\s+")
_WHOLE_WORD = 7
_WORD_CHARS = 5
"""A BPE vocabulary keeps most words of up to ``_WHOLE_WORD`` characters whole and cuts longer ones into
pieces of about ``_WORD_CHARS`` characters."""


def estimate_tokens(text: str) -> list[int]:
    """Stand-in ids, one per estimated token of ``text`` (a word, or one per ~5 characters of a long word; one per digit or symbol).

    The ids are hashes of the pieces (equal pieces, equal ids); only their
    count means anything. Whitespace runs count as one token when longer than
    one character.
    """
    ids: list[int] = []
    for match in _PIECES.finditer(text):
        piece = match.group()
        if piece.isspace():
            if len(piece) > 1:
                ids.append(zlib.crc32(piece.encode()) & 0xFFFFFF)
            continue
        step = (len(piece) if len(piece) <= _WHOLE_WORD else _WORD_CHARS) if piece.isalpha() else 1
        for i in range(0, len(piece), step):
            ids.append(zlib.crc32(piece[i:i + step].encode()) & 0xFFFFFF)
    return ids


class RemoteBackend:
    """The backend object of a remote judge: facts, the HTTP client, token estimates."""

    name = "remote"

    def __init__(self, spec: RemoteSpec, client: "RemoteClient", n_ctx: int) -> None:
        self.remote = spec
        self.client = client
        self.n_ctx = n_ctx
        self.served_tokenizer = ServedTokenizer(client)

    @property
    def tokens_evaluated(self) -> int:
        """Prompt tokens the server reported evaluating."""
        return self.client.counts["prompt_tokens"]

    def facts(self) -> BackendFacts:
        tokenizer = ("the server's (POST /tokenize)" if self.served_tokenizer.available
                     else "none here (token counts are estimates; the server's come with its answers)")
        return BackendFacts(architecture=f"remote ({self.remote.protocol})", device=self.remote.url, tokenizer=tokenizer)

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        served = self.served_tokenizer.tokens(text)
        return ([0] if add_bos else []) + (served if served is not None else estimate_tokens(text))

    def tokenize_pieces(self, pieces: Sequence[tuple[str, bool]], *, add_bos: bool) -> list[int]:
        return self.tokenize("".join(text for text, _ in pieces), add_bos=add_bos)

    def token_text(self, token_id: int) -> str:
        raise self._refuse("token_text")

    def bos_text(self) -> str:
        return ""

    def eos_text(self) -> str:
        return ""

    def chat_template(self) -> str | None:
        return None

    def label_logits(self, prompts: Sequence[Sequence[int]], token_ids: Sequence[int]) -> npt.NDArray[np.float64]:
        raise self._refuse("label_logits")

    def next_logits(self, tokens: Sequence[int]) -> npt.NDArray[np.float64]:
        raise self._refuse("next_logits")

    def is_end_of_generation(self, token_id: int) -> bool:
        raise self._refuse("is_end_of_generation")

    def detokenize(self, token_ids: Sequence[int]) -> str:
        raise self._refuse("detokenize")

    def reset_cache(self) -> None:
        """Nothing to forget here (the server keeps its own caches)."""

    def close(self) -> None:
        self.client.close()

    def _refuse(self, what: str) -> JudgelabError:
        return JudgelabError(f"The remote judge {self.remote.model} at {self.remote.url} has no tokens or logits "
                             f"here ({what}); ask it by text: JudgeModel.judge_many / probabilities.")
