"""The llama.cpp backend: GGUF models in process, through llama-cpp-python.

It wraps llama.cpp's low-level calls (``llama_batch``, ``llama_decode``,
``llama_get_logits_ith`` and the KV-cache sequence operations) behind the
engine's ``Backend`` protocol. Judging needs no sampling loop: each prompt is
prefilled and the logits of the label tokens are read at its last position.

Work is paid once per token:

* Prompts are sorted by their token ids, so prompts that share a prefix (the
  instructions, a document checked against many claims) are neighbours.
* Sequence 0 keeps the last shared prefix in the KV cache; a new group of
  prompts evaluates only the tokens after the longest prefix it already holds.
* A group's suffixes (the claims) run together in one ``llama_batch``, each on
  its own sequence id after a KV-cache copy of the shared prefix, so short
  suffixes go at the batched prefill rate.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from judgelab.errors import BackendUnavailableError, JudgelabError

__all__ = ["LlamaCppConfig", "LlamaCppBackend"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LlamaCppConfig:
    """Settings of a loaded GGUF model.

    ``n_ctx`` is the longest prompt accepted; the KV cache holds
    ``n_ctx + n_batch`` cells so that a batch of suffixes fits beside a
    prompt-long shared prefix.

    Three defaults make a judgment's numbers independent of how it was
    batched and of what the cache held (measured: identical logits, not just
    close): ``flash_attn=True`` (the plain attention path rounds the softmax
    to f16 after summing over cells of other sequences, so a sequence's
    result depended on its neighbours), ``repack_weights=False`` (llama.cpp's
    repacked CPU kernels round rows differently by their position in a
    4-row tile) and padding tiny batches (see ``LlamaCppBackend._fill``).
    """

    model_path: str
    n_ctx: int = 2048
    n_batch: int = 512
    n_seq_max: int = 32
    n_threads: int | None = None
    n_threads_batch: int | None = None
    n_gpu_layers: int = 0
    flash_attn: bool = True
    repack_weights: bool = False
    verbose: bool = False


def _import_llama_cpp():
    try:
        import llama_cpp
    except ImportError as exc:  # pragma: no cover - it is a core dependency
        raise BackendUnavailableError(
            "The llama_cpp backend needs llama-cpp-python: pip install llama-cpp-python",
            backend="llama_cpp",
        ) from exc
    return llama_cpp


# Decode batches are padded to at least this many tokens (see ``_fill``).
_MIN_ROWS = 8

_backend_init_lock = threading.Lock()
_backend_initialised = False


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class LlamaCppBackend:
    """A GGUF model loaded once, with a prefix-sharing KV cache."""

    name = "llama_cpp"

    def __init__(self, config: LlamaCppConfig) -> None:
        global _backend_initialised
        llama_cpp = _import_llama_cpp()
        from llama_cpp import _internals, _logger

        _logger.set_verbose(config.verbose)  # llama.cpp logs go to stderr only when verbose

        self._ll = llama_cpp
        self.config = config
        self.n_ctx = config.n_ctx
        self._lock = threading.RLock()
        path = Path(config.model_path)
        if not path.is_file():
            raise JudgelabError(f"GGUF file not found: {path}")
        with _backend_init_lock:
            if not _backend_initialised:
                llama_cpp.llama_backend_init()
                _backend_initialised = True

        mparams = llama_cpp.llama_model_default_params()
        mparams.n_gpu_layers = config.n_gpu_layers
        mparams.use_extra_bufts = config.repack_weights
        try:
            self._model = _internals.LlamaModel(
                path_model=str(path), params=mparams, verbose=config.verbose
            )
        except ValueError as exc:
            raise JudgelabError(f"llama.cpp could not load {path}: {exc}") from exc

        threads = config.n_threads or max(1, os.cpu_count() or 1)
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = config.n_ctx + config.n_batch
        cparams.n_batch = config.n_batch
        cparams.n_ubatch = config.n_batch  # one decode = one micro-batch: no tiny leftover splits
        cparams.n_seq_max = config.n_seq_max
        cparams.n_threads = threads
        cparams.n_threads_batch = config.n_threads_batch or threads
        cparams.kv_unified = True  # one cache shared by all sequences: prefixes are copied, not recomputed
        cparams.swa_full = True  # sliding-window layers keep every position, so prefixes can be reused
        cparams.no_perf = True
        if hasattr(cparams, "flash_attn_type"):
            cparams.flash_attn_type = (
                llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
                if config.flash_attn
                else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
            )
        try:
            self._ctx = _internals.LlamaContext(
                model=self._model, params=cparams, verbose=config.verbose
            )
        except ValueError as exc:
            self._model.close()
            raise JudgelabError(
                f"llama.cpp could not create a context of {cparams.n_ctx} tokens for {path}: {exc}. "
                "Try a smaller n_ctx."
            ) from exc
        self._batch = llama_cpp.llama_batch_init(config.n_batch, 0, config.n_seq_max)
        self._cached: list[int] = []  # tokens of sequence 0 now in the KV cache
        self._pad_seq = config.n_seq_max - 1  # reserved for padding tiny batches
        self._pad_token = max(0, self._model.token_bos())
        self._padded = False
        self._metadata = self._model.metadata()
        self.tokens_evaluated = 0  # prompt tokens actually decoded (for stats and tests)

    # -- model facts -------------------------------------------------------

    def tokenize(self, text: str, *, add_bos: bool) -> list[int]:
        return self._model.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    def token_text(self, token_id: int) -> str:
        return self._model.token_to_piece(token_id, special=True).rstrip(b"\0").decode(
            "utf-8", errors="replace"
        )

    def bos_text(self) -> str:
        bos = self._model.token_bos()
        return self.token_text(bos) if bos >= 0 and self._model.add_bos_token() else ""

    def eos_text(self) -> str:
        eot = self._model.token_eot()
        return self.token_text(eot if eot >= 0 else self._model.token_eos())

    def chat_template(self) -> str | None:
        return self._metadata.get("tokenizer.chat_template")

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self._metadata)

    # -- scoring -----------------------------------------------------------

    def label_logits(
        self, prompts: Sequence[Sequence[int]], token_ids: Sequence[int]
    ) -> np.ndarray:
        out = np.empty((len(prompts), len(token_ids)), dtype=np.float64)
        if not prompts:
            return out
        order = sorted(range(len(prompts)), key=lambda i: prompts[i])
        ids = list(token_ids)
        with self._lock:
            for group in self._groups([prompts[i] for i in order]):
                rows = [order[g] for g in group.members]
                logits = self._run_group(group)
                out[rows] = [[row[t] for t in ids] for row in logits]
        return out

    def _groups(self, prompts: list[Sequence[int]]):
        """Split sorted prompts into groups that share one prefix and fit a batch."""
        max_seqs = max(1, self.config.n_seq_max - 2)  # seq 0 holds the prefix, the last one pads
        i = 0
        while i < len(prompts):
            members = [i]
            prefix = len(prompts[i]) - 1
            suffix_total = len(prompts[i]) - prefix
            j = i + 1
            while j < len(prompts) and len(members) < max_seqs:
                shared = min(prefix, _common_prefix(prompts[members[0]], prompts[j]), len(prompts[j]) - 1)
                # Keep the group only while its shared prefix is a real saving.
                if shared < 0.5 * prefix or shared == 0:
                    break
                new_total = sum(len(prompts[m]) - shared for m in members) + len(prompts[j]) - shared
                if new_total > self.config.n_batch:
                    break
                members.append(j)
                prefix, suffix_total = shared, new_total
                j += 1
            yield _Group(members=[m for m in members], prompts=[prompts[m] for m in members], prefix=prefix)
            i = j

    def _run_group(self, group: "_Group") -> list[np.ndarray]:
        prefix = list(group.prompts[0][: group.prefix])
        if len(group.prompts) == 1:
            # One prompt: keep all of it in sequence 0 for the next call to reuse.
            tokens = list(group.prompts[0])
            return [self._extend_seq0(tokens, want_logits=True)]
        self._extend_seq0(prefix, want_logits=False)
        mem = self._ctx.memory
        seq_ids = list(range(1, len(group.prompts) + 1))
        for s in seq_ids:
            self._ll.llama_memory_seq_cp(mem, 0, s, 0, len(prefix))
        try:
            return self._decode_suffixes(
                [(s, list(p[len(prefix):]), len(prefix)) for s, p in zip(seq_ids, group.prompts)]
            )
        finally:
            for s in seq_ids:
                self._ll.llama_memory_seq_rm(mem, s, -1, -1)

    def _extend_seq0(self, tokens: list[int], *, want_logits: bool) -> np.ndarray | None:
        """Make sequence 0 hold exactly ``tokens``, decoding only what is new."""
        keep = _common_prefix(self._cached, tokens)
        if want_logits and keep == len(tokens):
            keep -= 1  # the last token must be decoded again to get its logits
        if keep < len(self._cached):
            if not self._ll.llama_memory_seq_rm(self._ctx.memory, 0, keep, -1):
                self._ll.llama_memory_seq_rm(self._ctx.memory, 0, -1, -1)
                keep = 0
            self._cached = self._cached[:keep]
        logits = None
        pos = keep
        while pos < len(tokens):
            end = min(len(tokens), pos + self.config.n_batch)
            last = end == len(tokens) and want_logits
            self._fill(
                [(0, tokens[pos:end], pos, last)],
            )
            self._decode()
            self._cached = tokens[:end]
            if last:
                logits = self._logits_at(end - pos - 1)
            pos = end
        return logits

    def _decode_suffixes(self, items: list[tuple[int, list[int], int]]) -> list[np.ndarray]:
        """Decode (seq_id, suffix tokens, start position) items in batches."""
        results: list[np.ndarray] = []
        pending = list(items)
        while pending:
            chunk, used = [], 0
            while pending and used + len(pending[0][1]) <= self.config.n_batch:
                item = pending.pop(0)
                chunk.append(item)
                used += len(item[1])
            if not chunk:  # a suffix longer than a batch: run it on its own in pieces
                seq, toks, start = pending.pop(0)
                for k in range(0, len(toks), self.config.n_batch):
                    piece = toks[k : k + self.config.n_batch]
                    last = k + len(piece) == len(toks)
                    self._fill([(seq, piece, start + k, last)])
                    self._decode()
                results.append(self._logits_at(len(piece) - 1))
                continue
            self._fill([(seq, toks, start, True) for seq, toks, start in chunk])
            self._decode()
            ends = np.cumsum([len(t) for _, t, _ in chunk]) - 1
            results.extend(self._logits_at(int(e)) for e in ends)
        return results

    def _fill(self, pieces: list[tuple[int, list[int], int, bool]]) -> None:
        """Fill the batch with (seq_id, tokens, first position, logits at last) pieces.

        A batch of fewer than ``_MIN_ROWS`` tokens is padded with a throw-away
        sequence: llama.cpp's CPU matmul takes another code path for tiny
        batches, whose rounding differs, and a judgment must not depend on how
        its tokens happened to be batched.
        """
        total = sum(len(p[1]) for p in pieces)
        if total < _MIN_ROWS:
            pad = self._pad_token
            pieces = pieces + [(self._pad_seq, [pad] * (_MIN_ROWS - total), 0, False)]
            self._padded = True
        b = self._batch
        n = 0
        for seq, toks, start, want_last in pieces:
            for k, tok in enumerate(toks):
                b.token[n] = tok
                b.pos[n] = start + k
                b.n_seq_id[n] = 1
                b.seq_id[n][0] = seq
                b.logits[n] = want_last and k == len(toks) - 1
                n += 1
        b.n_tokens = n
        self.tokens_evaluated += n - (_MIN_ROWS - total if total < _MIN_ROWS else 0)

    def _decode(self) -> None:
        rc = self._ll.llama_decode(self._ctx.ctx, self._batch)
        if self._padded:
            self._ll.llama_memory_seq_rm(self._ctx.memory, self._pad_seq, -1, -1)
            self._padded = False
        if rc != 0:
            self._ll.llama_memory_clear(self._ctx.memory, True)
            self._cached = []
            raise JudgelabError(
                f"llama_decode failed with code {rc} (KV cache full or bad batch); the cache was "
                "cleared. Try a smaller batch or a larger n_ctx."
            )

    def _logits_at(self, index: int) -> np.ndarray:
        ptr = self._ll.llama_get_logits_ith(self._ctx.ctx, index)
        n_vocab = self._ll.llama_vocab_n_tokens(self._model.vocab)
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)).copy()

    def next_logits(self, tokens: Sequence[int]) -> np.ndarray:
        """Full-vocabulary logits after ``tokens`` (for free-text greedy decoding)."""
        with self._lock:
            return self._extend_seq0(list(tokens), want_logits=True).astype(np.float64)

    def is_end_of_generation(self, token_id: int) -> bool:
        return bool(self._ll.llama_vocab_is_eog(self._model.vocab, token_id))

    def detokenize(self, token_ids: Sequence[int]) -> str:
        return self._model.detokenize(list(token_ids), special=False).decode("utf-8", errors="replace")

    # -- lifecycle -----------------------------------------------------------

    def reset_cache(self) -> None:
        """Forget every cached prefix (for tests and memory pressure)."""
        with self._lock:
            self._ll.llama_memory_clear(self._ctx.memory, True)
            self._cached = []

    def close(self) -> None:
        with self._lock:
            if self._batch is not None:
                self._ll.llama_batch_free(self._batch)
                self._batch = None
            self._ctx.close()
            self._model.close()


@dataclass
class _Group:
    members: list[int]
    prompts: list[Sequence[int]]
    prefix: int
