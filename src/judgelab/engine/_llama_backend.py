"""The llama.cpp backend: GGUF models in process, through llama-cpp-python.

It wraps llama.cpp's low-level calls (``llama_batch``, ``llama_decode``,
``llama_get_logits_ith`` and the KV-cache sequence operations) behind the
engine's ``Backend`` protocol. Judging needs no sampling loop: each prompt is
prefilled and the logits of the label tokens are read at its last position.

Work is paid once per token:

* Prompts are sorted by their token ids, so prompts that share a prefix (the
  instructions, a document checked against many claims) are neighbours.
* Sequence 0 keeps the last prompt in the KV cache; the next one evaluates
  only the tokens after the longest prefix the cache already holds, cut back
  to the last *piece bound* (``_schedule.chunk_bounds``: after a newline, at
  most ``piece_tokens`` apart, read from position 0). Every prompt is decoded
  in those pieces, whatever was cached, so each KV cell is computed in the
  same decode shape as when the prompt is scored alone, and sits in the cell
  of its own position. Results are bit-identical to scoring each prompt
  alone (see ``LlamaCppConfig``).
* A long prompt can be evaluated in pieces (``prefill``), so that a server
  can answer other requests between them; the interrupted prompt's cache is
  parked in host memory meanwhile (``_llama_parking``), so no token is
  computed twice.
* With ``packed=True``, runs of sorted prompts are decoded as a trie (see
  ``_schedule``): each shared token once, tagged with the sequence id of
  every prompt that contains it, in ``llama_batch``es of up to ``n_batch``
  tokens, so short suffixes run at the batched prefill rate. Faster, not
  bit-identical.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from judgelab.engine._backend import BackendFacts
from judgelab.engine._label_head import LabelHead, load_label_head
from judgelab.engine._llama_config import LlamaCppConfig, context_params, gpu_settings
from judgelab.engine._llama_hidden import HiddenCapture
from judgelab.engine._llama_logs import route_llama_logs
from judgelab.engine._llama_parking import Parking
from judgelab.engine._llama_pieces import DecodePiece, decode_steps
from judgelab.engine._schedule import chunk_bounds, common_prefix, last_bound, plan_batches, segments, shared_base
from judgelab.engine._special import Control, TemplateSplitter, fragments, split_at_controls
from judgelab.errors import BackendUnavailableError, JudgelabError

if TYPE_CHECKING:
    from judgelab.engine._llama_adapter import LoraHandle

__all__ = ["LlamaCppBackend"]

log = logging.getLogger(__name__)


def _import_llama_cpp() -> ModuleType:
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

# A decode piece ends after a newline token once it holds this many tokens (see ``_schedule.chunk_bounds``).
_CUT_MIN = 32

# Interrupted prompts parked in host memory at once.
_PARK_SLOTS = 8

# The label head is used when its logits are this close to the full output layer's.
_HEAD_TOLERANCE = 1e-3
_HEAD_PROBE = "Document: The museum opens at nine and closes at five.\nClaim: The museum opens in the morning.\nAnswer:"

_backend_init_lock = threading.Lock()
_backend_initialised = False


class LlamaCppBackend:
    """A GGUF model loaded once, with a prefix-sharing KV cache."""

    name = "llama_cpp"

    def __init__(self, config: LlamaCppConfig) -> None:
        global _backend_initialised
        llama_cpp = _import_llama_cpp()
        from llama_cpp import _internals

        route_llama_logs(llama_cpp, verbose=config.verbose)

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

        cparams = context_params(llama_cpp, config)
        self._head: LabelHead | None = None
        self._capture: HiddenCapture | None = None
        self.offloaded = bool(config.n_gpu_layers) and bool(llama_cpp.llama_supports_gpu_offload())
        use_head, note = gpu_settings(self.offloaded, config)
        if note:
            log.info("%s", note)
        if use_head:
            self._attach_label_head(path, cparams)
        # None until checked: max |logit difference| of the label head against the full output layer
        self.label_head_error: float | None = None
        self.label_head_decodes = 0  # decodes whose label logits came from the head (for tests, stats)
        self._hidden: npt.NDArray[np.float32] | None = None
        self._probing = False  # True while the head is being checked
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
        self._lora = self._attach_lora(config.lora_path) if config.lora_path else None
        self._batch = llama_cpp.llama_batch_init(config.n_batch, 0, config.n_seq_max)
        self._cached: list[int] = []  # tokens of sequence 0 now in the KV cache
        self._clean = 0  # leading cached tokens computed in exactly their own pieces (``_bounds``)
        self._resumable = False  # sequence 0 holds a prompt evaluated in pieces (prefill), not judged yet
        self._parking = Parking(llama_cpp, lambda: self._ctx.ctx, lambda: self._ctx.memory, _PARK_SLOTS,
                                cparams.n_ctx)
        self._piece_max = max(1, min(config.piece_tokens, config.n_batch))
        self._cuts: dict[int, bool] = {}  # token id -> whether a piece may end after it
        self.supports_prefill = not config.packed
        self._pad_seq = config.n_seq_max - 1  # reserved for padding tiny batches
        self._pad_token = max(0, self._model.token_bos())
        self._pad_pos = 0  # next position of the padding sequence
        self._metadata = self._model.metadata()
        self.tokens_evaluated = 0  # prompt tokens actually decoded (for stats and tests)
        self._template_split = TemplateSplitter(self._split_controls)  # template pieces cut at their control tokens

    def _attach_label_head(self, path: Path, cparams: Any) -> None:
        """Read label logits from a shipped label head (via a hidden-state callback) when it fits the model."""
        llama_cpp = self._ll
        head = load_label_head(path)
        n_embd = llama_cpp.llama_model_n_embd(self._model.model)
        if head is not None and head.n_embd == n_embd:
            try:
                self._capture = HiddenCapture(llama_cpp, n_embd)
            except OSError as exc:
                log.info("label head off: %s", exc)
            else:
                self._head = head
                cparams.cb_eval = self._capture.callback
                cparams.cb_eval_user_data = None

    def _attach_lora(self, path: str) -> "LoraHandle":
        """The spec's LoRA adapter applied to the context (closing both when llama.cpp refuses it)."""
        from judgelab.engine._llama_adapter import attach_lora

        try:
            return attach_lora(self._ll, self._model.model, self._ctx.ctx, path,
                               self.config.lora_scale)
        except JudgelabError:
            self._ctx.close()
            self._model.close()
            raise

    # -- model facts -------------------------------------------------------

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        ids: list[int] = self._model.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special)
        return ids

    def tokenize_pieces(self, pieces: Sequence[tuple[str, bool]], *, add_bos: bool) -> list[int]:
        """Ids of ``(text, parse_special)`` pieces: control tokens only from parsed pieces.

        llama.cpp itself cuts a text at control tokens and tokenises each
        fragment on its own, so for pieces without control-token strings in
        their plain parts the ids equal ``tokenize(whole, special=True)``.
        """
        ids: list[int] = []
        for fragment in fragments(pieces, self._template_split):
            if isinstance(fragment, int):
                ids.append(fragment)
            else:
                ids.extend(self.tokenize(fragment, add_bos=False, special=False))
        if add_bos:
            vocab = self._model.vocab
            if self._model.add_bos_token():
                ids.insert(0, self._model.token_bos())
            if self._ll.llama_vocab_get_add_eos(vocab):
                ids.append(self._model.token_eos())
        return ids

    def _split_controls(self, text: str) -> list[str | Control]:
        tokens = self.tokenize(text, add_bos=False, special=True)
        return split_at_controls(text, tokens, self._control, self.token_text)

    def _control(self, token_id: int) -> Control | None:
        """The token as a ``Control`` when special-token parsing alone produces it."""
        ll = self._ll
        attr = int(ll.llama_vocab_get_attr(self._model.vocab, token_id))
        if not attr & (ll.LLAMA_TOKEN_ATTR_CONTROL | ll.LLAMA_TOKEN_ATTR_UNKNOWN):
            return None
        return Control(
            token_id,
            lstrip=bool(attr & ll.LLAMA_TOKEN_ATTR_LSTRIP),
            rstrip=bool(attr & ll.LLAMA_TOKEN_ATTR_RSTRIP),
        )

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

    def facts(self) -> BackendFacts:
        model = self._model.model
        return BackendFacts(
            architecture=self._metadata.get("general.architecture", ""),
            n_params=int(self._ll.llama_model_n_params(model)),
            quantization=_file_type_name(self._ll, self._metadata.get("general.file_type")),
            size_bytes=int(self._ll.llama_model_size(model)),
            device="gpu" if self.offloaded else "cpu",
            tokenizer=f"llama-cpp-python {getattr(self._ll, '__version__', '?')}",
        )

    # -- scoring -----------------------------------------------------------

    def label_logits(
        self, prompts: Sequence[Sequence[int]], token_ids: Sequence[int]
    ) -> npt.NDArray[np.float64]:
        out = np.empty((len(prompts), len(token_ids)), dtype=np.float64)
        if not prompts:
            return out
        ids = list(token_ids)
        with self._lock:
            self._check_label_head()
        if not self.config.packed:
            order = sorted(range(len(prompts)), key=lambda i: tuple(prompts[i]))
            with self._lock:
                for i in order:
                    out[i] = self._logits_seq0(list(prompts[i]), ids=ids)
            return out
        distinct = sorted({tuple(p) for p in prompts})
        where = {p: k for k, p in enumerate(distinct)}
        rows = np.empty((len(distinct), len(ids)), dtype=np.float64)
        max_seqs = self.config.n_seq_max - 2  # seq 0 holds the base, the last one pads
        with self._lock:
            base = shared_base(distinct)
            for lo, hi in plan_batches(distinct, base, n_batch=self.config.n_batch, max_seqs=max_seqs):
                # The run's own common prefix lives in sequence 0, reusing
                # whatever of it the previous run left there.
                run_base = shared_base(distinct[lo:hi])
                self._extend_seq0(list(distinct[lo][:run_base]), want_logits=False, exact=False)
                for k, row in self._run_packed(distinct, lo, hi, run_base, ids):
                    rows[k] = row
        for i, p in enumerate(prompts):
            out[i] = rows[where[tuple(p)]]
        return out

    def _run_packed(
        self, prompts: Sequence[Sequence[int]], lo: int, hi: int, base: int, ids: list[int]
    ) -> list[tuple[int, list[float]]]:
        """Decode prompts ``lo..hi-1`` as one trie on sequences 1..; label logits per prompt.

        Each prompt gets its own sequence id, starting from a copy of the base
        held in sequence 0. Every shared token is decoded once, tagged with
        the sequence ids of all prompts that contain it (see
        ``_schedule.segments``). More than ``n_batch`` tokens are decoded in
        several steps.
        """
        mem = self._ctx.memory
        seqs = {i: 1 + i - lo for i in range(lo, hi)}
        for s in seqs.values():
            self._ll.llama_memory_seq_cp(mem, 0, s, 0, base)
        stream = [
            DecodePiece(tuple(seqs[m] for m in seg.members), prompts[seg.owner][seg.start : seg.end],
                   seg.start, seg.logits_for)
            for seg in segments(prompts, lo, hi, base)
        ]
        results: list[tuple[int, list[float]]] = []
        try:
            for step in decode_steps(stream, self.config.n_batch):
                self._fill(step)
                self._decode(labels_only=True)
                index, output = -1, 0
                for piece in step:
                    index += len(piece.tokens)
                    if piece.member is not None and piece.last:
                        results.append((piece.member, self._label_logits_at(output, index, ids)))
                        output += 1
        finally:
            for s in seqs.values():
                self._ll.llama_memory_seq_rm(mem, s, -1, -1)
            self._drop_padding()
        return results

    def _pad_piece(self, n: int) -> DecodePiece:
        """Throw-away tokens on the padding sequence (positions continue across calls)."""
        piece = DecodePiece((self._pad_seq,), [self._pad_token] * n, self._pad_pos, None)
        self._pad_pos += n
        return piece

    def _drop_padding(self) -> None:
        if self._pad_pos:
            self._ll.llama_memory_seq_rm(self._ctx.memory, self._pad_seq, -1, -1)
            self._pad_pos = 0

    def prefill(self, tokens: Sequence[int], max_tokens: int) -> int:
        """Evaluate up to ``max_tokens`` more tokens of a prompt before it is judged; returns the tokens still to do.

        Whole pieces are decoded (``_bounds``; at least one, even when it is
        longer than ``max_tokens``), never the piece holding the last token:
        the judgment decodes that one, as when the prompt is scored alone, and
        reads its logits there. So the result is at least 1, and a call that
        has only that piece left returns the same as the call before. Until
        the prompt is judged it is resumable: a prompt scored meanwhile parks
        its cells in host memory instead of discarding them
        (``_llama_parking``), and the next call (or the judgment) goes on from
        where this one stopped.
        """
        tokens = list(tokens)
        with self._lock:
            self._check_label_head()  # it resets the cache, so it runs before any piece
            if len(tokens) > 1 and max_tokens > 0:
                self._extend_seq0(tokens, want_logits=False, limit=max_tokens)
            return len(tokens) - common_prefix(self._cached, tokens)

    @property
    def parked_tokens(self) -> int:
        """Tokens of interrupted prompts parked in host memory (for tests and stats)."""
        return self._parking.tokens

    def _is_cut(self, token: int) -> bool:
        cut = self._cuts.get(token)
        if cut is None:
            cut = self._cuts[token] = "\n" in self.token_text(token)
        return cut

    def _bounds(self, tokens: Sequence[int]) -> list[int]:
        """Where ``tokens``' decode pieces end; a function of the tokens alone (``_schedule.chunk_bounds``)."""
        return chunk_bounds(tokens, self._is_cut, min_tokens=min(_CUT_MIN, self._piece_max),
                            max_tokens=self._piece_max)

    def _swap_in(self, tokens: list[int]) -> None:
        """Put a parked prefix of ``tokens`` back on sequence 0 when it covers more of them than sequence 0 does."""
        best = self._parking.best(tokens)
        if best is None or best[1] <= common_prefix(self._cached, tokens):
            return
        if self._resumable:
            self._parking.park(self._cached, self._clean, evict=False)
        park = self._parking.restore(best[0])
        self._cached, self._clean = (park.tokens, park.clean) if park is not None else ([], 0)
        self._resumable = park is not None

    def _cut_seq0(self, keep: int) -> None:
        """Drop sequence 0's cells from position ``keep`` on (parking them first when their prompt is unfinished)."""
        if keep < len(self._cached):
            if self._resumable:
                self._parking.park(self._cached, self._clean)
            if not self._ll.llama_memory_seq_rm(self._ctx.memory, 0, keep, -1):
                self._ll.llama_memory_clear(self._ctx.memory, False)
                keep = 0
            self._cached = self._cached[:keep]
        self._clean = min(self._clean, keep)

    def _plan(self, tokens: list[int], keep: int, bounds: list[int] | None, limit: int | None) -> list[tuple[int, int]]:
        """The decodes ``[start, end)`` that take sequence 0 from ``keep`` tokens to ``tokens`` (or, with ``limit``, part way)."""
        if bounds is None:  # free-text generation: n_batch steps
            stop = len(tokens) if limit is None else min(len(tokens), keep + limit)
            step = self.config.n_batch
            return [(p, min(stop, p + step)) for p in range(keep, stop, step)]
        ends = [b for b in bounds if b > keep]
        if limit is None:
            if not ends or ends[-1] != len(tokens):
                ends.append(len(tokens))
        else:  # whole pieces within the limit (at least one), never the piece of the last token
            fit = [b for b in ends if b < len(tokens)]
            ends = [b for k, b in enumerate(fit) if k == 0 or b - keep <= limit]
        return list(zip([keep, *ends[:-1]], ends))

    def _extend_seq0(
        self, tokens: list[int], *, want_logits: bool, ids: list[int] | None = None, limit: int | None = None,
        exact: bool = True,
    ) -> npt.NDArray[np.float32 | np.float64] | None:
        """Make sequence 0 hold ``tokens``, decoding only what is new.

        With ``exact`` (every judgment), tokens are decoded in the pieces of
        ``_bounds``, and cached cells are kept only up to the last bound that
        they were computed to in those same pieces (``_clean``), so that every
        cell holds what it holds when the prompt is scored alone. Without
        (free-text generation), any cached prefix is kept and new tokens go in
        ``n_batch`` steps. With ``want_logits``, returns the logits at the
        last token: of ``ids`` when given, else of the whole vocabulary. With
        ``limit``, decodes part of the prompt (``prefill``; see ``_plan``) and
        leaves it resumable.
        """
        self._swap_in(tokens)
        bounds = self._bounds(tokens) if exact else None
        top = min(common_prefix(self._cached, tokens), len(tokens) - 1 if want_logits else len(tokens))
        keep = last_bound(bounds, min(top, self._clean)) if bounds is not None else top
        self._cut_seq0(keep)
        self._resumable = limit is not None
        ends = set(bounds or ())
        logits = None
        for start, end in self._plan(tokens, keep, bounds, limit):
            last = end == len(tokens) and want_logits
            self._fill([DecodePiece((0,), tokens[start:end], start, -1 if last else None)])
            self._decode(labels_only=last and ids is not None)
            self._drop_padding()
            self._cached = tokens[:end]
            if self._clean == start and end in ends:
                self._clean = end
            if last:
                index = end - start - 1
                logits = np.array(self._label_logits_at(0, index, ids)) if ids is not None else self._full_logits(index)
        return logits

    def _logits_seq0(self, tokens: list[int], *, ids: list[int] | None = None, exact: bool = True) -> npt.NDArray[np.float32 | np.float64]:
        """``_extend_seq0`` with the logits at the last token, which it always decodes when they are wanted."""
        logits = self._extend_seq0(tokens, want_logits=True, ids=ids, exact=exact)
        if logits is None:
            raise JudgelabError(f"llama.cpp decoded no logits for a prompt of {len(tokens)} tokens; please report it.")
        return logits

    def _fill(self, pieces: Sequence[DecodePiece]) -> None:
        """Fill the llama batch with pieces; logits only at pieces' last tokens
        that belong to a member.

        A batch of fewer than ``_MIN_ROWS`` tokens is padded with a throw-away
        sequence: llama.cpp's CPU matmul takes another code path for tiny
        batches, whose rounding differs, and a judgment must not depend on how
        its tokens happened to be batched.
        """
        total = sum(len(p.tokens) for p in pieces)
        if total < _MIN_ROWS:
            pieces = [*pieces, self._pad_piece(_MIN_ROWS - total)]
        b = self._batch
        n = 0
        for piece in pieces:
            want = piece.member is not None and piece.last
            last = len(piece.tokens) - 1
            for k, tok in enumerate(piece.tokens):
                b.token[n] = tok
                b.pos[n] = piece.start + k
                b.n_seq_id[n] = len(piece.seqs)
                for j, seq in enumerate(piece.seqs):
                    b.seq_id[n][j] = seq
                b.logits[n] = want and k == last
                n += 1
        b.n_tokens = n
        self.tokens_evaluated += min(n, total)

    def _decode(self, *, labels_only: bool = False) -> None:
        """Run the batch. With ``labels_only`` and a checked label head, stop
        before the output layer and keep the hidden states of the output rows."""
        capture = self._capture if labels_only and self._head_trusted() else None
        if capture is not None:
            capture.arm()
        try:
            rc = self._ll.llama_decode(self._ctx.ctx, self._batch)
        finally:
            self._hidden = capture.disarm() if capture is not None else None
        if self._hidden is not None:
            self.label_head_decodes += 1
        if rc != 0:
            self._ll.llama_memory_clear(self._ctx.memory, True)
            self._cached = []
            self._clean = 0
            self._parking.forget()
            self._resumable = False
            raise JudgelabError(
                f"llama_decode failed with code {rc} (KV cache full or bad batch); the cache was "
                "cleared. Try a smaller batch or a larger n_ctx."
            )

    def _label_logits_at(self, output: int, index: int, ids: list[int]) -> list[float]:
        """Label logits of the ``output``-th output row, at batch position ``index``."""
        if self._hidden is not None and self._head is not None:
            logits: list[float] = self._head.logits(self._hidden[output], ids)[0].tolist()
            return logits
        return self._logits_of(index, ids)

    def _head_trusted(self) -> bool:
        if self._probing:
            return True
        return self.label_head_error is not None and self.label_head_error <= _HEAD_TOLERANCE

    def _check_label_head(self) -> None:
        """Compare the label head with the full output layer once, on a short prompt.

        A model whose output layer does more than a matrix product that
        ``_label_head`` knows (a logit scale, a bias, an unknown weight type)
        fails the check and keeps the full output layer.
        """
        if self._capture is None or self.label_head_error is not None:
            return
        tokens = self.tokenize(_HEAD_PROBE, add_bos=True)
        counters = self.tokens_evaluated, self.label_head_decodes  # the probe is not the caller's work
        self.reset_cache()
        full = self._logits_seq0(tokens)  # not yet trusted: the full layer
        ids = [int(t) for t in np.argsort(full)[-16:]] + [int(t) for t in tokens[-4:]]
        self.reset_cache()
        self._probing = True
        try:
            head = self._logits_seq0(tokens, ids=ids)
            captured = self._hidden is not None
        finally:
            self._probing = False
            self.reset_cache()
            self.tokens_evaluated, self.label_head_decodes = counters
        error = float(np.max(np.abs(head - full[ids]))) if captured else float("inf")
        self.label_head_error = error
        if error > _HEAD_TOLERANCE:
            log.info("label head differs from the full output layer by %.3g; using the full layer", error)

    def _logits_of(self, index: int, ids: list[int]) -> list[float]:
        """The logits of ``ids`` at batch position ``index`` (no full-vocabulary copy)."""
        ptr = self._ll.llama_get_logits_ith(self._ctx.ctx, index)
        return [float(ptr[t]) for t in ids]

    def _full_logits(self, index: int) -> npt.NDArray[np.float32]:
        ptr = self._ll.llama_get_logits_ith(self._ctx.ctx, index)
        n_vocab = self._ll.llama_vocab_n_tokens(self._model.vocab)
        return np.ctypeslib.as_array(
            ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,)
        ).copy()

    def next_logits(self, tokens: Sequence[int]) -> npt.NDArray[np.float64]:
        """Full-vocabulary logits after ``tokens`` (for free-text greedy decoding)."""
        with self._lock:
            return self._logits_seq0(list(tokens), exact=False).astype(np.float64)

    def is_end_of_generation(self, token_id: int) -> bool:
        return bool(self._ll.llama_vocab_is_eog(self._model.vocab, token_id))

    def detokenize(self, token_ids: Sequence[int]) -> str:
        return self._model.detokenize(list(token_ids), special=False).decode("utf-8", errors="replace")

    def time_prefill(self, tokens: Sequence[int], batch_size: int) -> float:
        """Seconds to prefill ``tokens`` on an empty cache, ``batch_size`` per decode.

        For benchmarks: the hardware's prefill rate, the ceiling judgments
        are measured against. Leaves the cache empty.
        """
        import time

        size = max(1, min(batch_size, self.config.n_batch))
        with self._lock:
            self.reset_cache()
            t0 = time.perf_counter()
            for start in range(0, len(tokens), size):
                self._fill([DecodePiece((0,), list(tokens[start : start + size]), start, None)])
                self._decode()
                self._drop_padding()
            elapsed = time.perf_counter() - t0
            self.reset_cache()
        return elapsed

    # -- lifecycle -----------------------------------------------------------

    def reset_cache(self) -> None:
        """Forget every cached prefix (for tests and memory pressure)."""
        with self._lock:
            self._ll.llama_memory_clear(self._ctx.memory, True)
            self._cached = []
            self._clean = 0
            self._parking.forget()
            self._resumable = False

    def close(self) -> None:
        with self._lock:
            if self._batch is not None:
                self._ll.llama_batch_free(self._batch)
                self._batch = None
            self._ctx.close()
            if self._lora is not None:
                self._lora.free()
                self._lora = None
            self._model.close()


def _file_type_name(llama_cpp: ModuleType, file_type: str | None) -> str:
    """``general.file_type`` (an int) as llama.cpp names it: 15 -> ``"Q4_K_M"``."""
    if file_type is None or not str(file_type).isdigit():
        return ""
    for name in dir(llama_cpp):
        if name.startswith("LLAMA_FTYPE_") and getattr(llama_cpp, name) == int(file_type):
            return name.removeprefix("LLAMA_FTYPE_").removeprefix("MOSTLY_").removeprefix("ALL_")
    return f"file_type {file_type}"
