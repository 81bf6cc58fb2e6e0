"""The transformers backend: the same judge contract on torch, CPU or GPU.

It loads a Hugging Face model folder, a repo id, or a GGUF file (converted
once through transformers' GGUF loader and cached, see ``_hf_cache``), and
implements the engine's ``Backend`` protocol. Judging is one batched forward
pass:

* prompts are sorted by length and cut into buckets of similar lengths, so
  little padding is computed;
* each bucket is left-padded, with an attention mask and explicit position
  ids (a prompt's positions start at 0 after its padding, so padding changes
  no real token's numbers);
* only the last position's logits are computed (``logits_to_keep=1``), and
  since padding is on the left that is every prompt's last real token.

torch and transformers are imported only when a model is loaded, so
``import judgelab`` never imports them.
"""

from __future__ import annotations

import copy
import inspect
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from judgelab.engine._backend import BackendFacts
from judgelab.engine._schedule import prefix_groups
from judgelab.engine._special import Control, TemplateSplitter, fragments, split_at_controls
from judgelab.engine._transformers_config import TransformersConfig, import_torch
from judgelab.engine._transformers_source import merged_adapter, resolve_source
from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    import torch
    from torch import Tensor
    from transformers import Cache, PreTrainedModel

__all__ = ["TransformersBackend"]

log = logging.getLogger(__name__)

# A bucket takes no prompt that would make more than this share of it padding.
_MAX_PADDING = 0.125

# Tokens per forward pass when batch_size="auto" (rows x padded length).
_AUTO_TOKENS = {"cpu": 4096, "cuda": 32768}
_AUTO_MAX_ROWS = {"cpu": 32, "cuda": 128}

# End-of-turn token texts, as llama.cpp recognises them: when the vocabulary
# has one, it is the model's "eos_text" and ends generation too.
_END_OF_TURN = ("<end_of_turn>", "<|eot_id|>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<EOT>")


class TransformersBackend:
    """A causal LM loaded with transformers, scoring label tokens in batched forwards."""

    name = "transformers"

    def __init__(self, config: TransformersConfig) -> None:
        torch, transformers = import_torch()
        self._torch = torch
        self._transformers_version = transformers.__version__
        self.config = config
        self.n_ctx = config.n_ctx
        self._lock = threading.RLock()
        if config.n_threads:
            torch.set_num_threads(config.n_threads)

        device = config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        elif device == "cuda" and not torch.cuda.is_available():
            raise JudgelabError(
                "device='cuda' was asked for but torch sees no CUDA GPU "
                f"(torch {torch.__version__}). Use device='cpu' or 'auto', or install a CUDA build of torch."
            )
        self.device_kind = device
        dtype_name = config.dtype if config.dtype != "auto" else ("bfloat16" if device == "cuda" else "float32")
        self.dtype = getattr(torch, dtype_name)

        source = resolve_source(config)
        self.source = source
        kwargs: dict[str, object] = {"dtype": self.dtype}
        if config.attn_implementation:
            kwargs["attn_implementation"] = config.attn_implementation
        if config.device == "auto" and device == "cuda":
            kwargs["device_map"] = "auto"
        try:
            self._tok = transformers.AutoTokenizer.from_pretrained(source)
            self._model = transformers.AutoModelForCausalLM.from_pretrained(source, **kwargs)
        except OSError as exc:
            raise JudgelabError(
                f"transformers could not load {source!r}: {exc}. Pass a model folder, a .gguf "
                "file, or a repo id that is in the local Hugging Face cache (or reachable online)."
            ) from exc
        if config.adapter_path:
            self._model = merged_adapter(self._model, config.adapter_path, config.adapter_scale)
        if "device_map" not in kwargs:
            self._model.to(device)
        self._model.eval()
        self._input_device = self._model.get_input_embeddings().weight.device

        tok = self._tok
        self._bos_id = tok.bos_token_id
        probe = tok("x").input_ids
        self._add_bos = self._bos_id is not None and bool(probe) and probe[0] == self._bos_id
        self._pad_id = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
        self._eog = self._end_of_generation_ids()
        self._controls = self._control_tokens()
        self._template_split = TemplateSplitter(self._split_controls)  # template pieces cut at their control tokens
        self._eos_text = self._pick_eos_text()

        if config.batch_size == "auto":
            self._max_rows = _AUTO_MAX_ROWS[device]
            self._max_tokens: int | None = _AUTO_TOKENS[device]
        else:
            self._max_rows = int(config.batch_size)
            self._max_tokens = None
        # transformers 5 renamed ``past_key_values`` to ``cache`` (input and output)
        params = inspect.signature(self._model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._decoder = self._model.get_decoder()
        decoder_params = inspect.signature(self._decoder.forward).parameters
        self._decoder_cache_kw = "cache" if "cache" in decoder_params else "past_key_values"
        self._decoder_takes_cache_position = "cache_position" in decoder_params
        self._softcap = getattr(getattr(self._model, "config", None), "final_logit_softcapping", None)
        self.tokens_padded = 0  # padding positions run through the model (waste)
        self._cached_tokens: list[int] = []  # next_logits' KV cache holds these tokens
        self._cache = None
        self.tokens_evaluated = 0  # real (unpadded) prompt tokens run through the model
        self.forward_passes = 0

    @property
    def torch_model(self) -> PreTrainedModel:
        """The loaded ``torch.nn.Module`` (a transformers causal LM), for tuning and inspection.

        Modules injected into it (a PEFT LoRA) are used by every later judgment.
        """
        model: PreTrainedModel = self._model
        return model

    # -- model facts -------------------------------------------------------

    def _end_of_generation_ids(self) -> set[int]:
        ids: set[int] = set()
        for value in (self._tok.eos_token_id, getattr(self._model.generation_config, "eos_token_id", None)):
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, (list, tuple)):
                ids.update(int(v) for v in value)
        ids.update(i for i in map(self._special_id, _END_OF_TURN) if i is not None)
        return ids

    def _special_id(self, text: str) -> int | None:
        """The id of ``text`` when the vocabulary has it as one special token."""
        ids = self._tok(text, add_special_tokens=False).input_ids
        return ids[0] if len(ids) == 1 and text in self._tok.get_added_vocab() else None

    def _pick_eos_text(self) -> str:
        for text in _END_OF_TURN:
            if self._special_id(text) is not None:
                return text
        return self._tok.eos_token or ""

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]:
        kwargs = {} if special else {"split_special_tokens": True}
        ids = list(self._tok(text, add_special_tokens=False, **kwargs).input_ids)
        if add_bos and self._add_bos:
            ids.insert(0, self._bos_id)
        return ids

    def tokenize_pieces(self, pieces: Sequence[tuple[str, bool]], *, add_bos: bool) -> list[int]:
        """Ids of ``(text, parse_special)`` pieces: control tokens only from parsed pieces.

        The whole text is tokenised as before; only when a control token
        came from a plain piece are the pieces tokenised fragment by
        fragment, the plain ones with special tokens split (so for prompts
        without forged markers the ids equal ``tokenize(whole)``).
        """
        text = "".join(t for t, _ in pieces)
        ids: list[int] | None = None
        if getattr(self._tok, "is_fast", False):
            enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)
            plain, pos = [], 0
            for part, special in pieces:
                if not special:
                    plain.append((pos, pos + len(part)))
                pos += len(part)
            forged = any(
                token in self._controls and any(a < end and start < b for a, b in plain)
                for token, (start, end) in zip(enc.input_ids, enc.offset_mapping)
            )
            ids = None if forged else list(enc.input_ids)
        if ids is None:
            ids = []
            for fragment in fragments(pieces, self._template_split):
                if isinstance(fragment, int):
                    ids.append(fragment)
                else:
                    ids.extend(self.tokenize(fragment, add_bos=False, special=False))
        if add_bos and self._add_bos:
            ids.insert(0, self._bos_id)
        return ids

    def _split_controls(self, text: str) -> list[str | Control]:
        tokens = self.tokenize(text, add_bos=False)
        return split_at_controls(text, tokens, self._controls.get, self.token_text)

    def _control_tokens(self) -> dict[int, Control]:
        """The special added tokens (those special-token parsing alone produces)."""
        out: dict[int, Control] = {}
        for token_id, added in getattr(self._tok, "added_tokens_decoder", {}).items():
            if getattr(added, "special", False):
                out[int(token_id)] = Control(
                    int(token_id), lstrip=bool(getattr(added, "lstrip", False)),
                    rstrip=bool(getattr(added, "rstrip", False)),
                )
        return out

    def token_text(self, token_id: int) -> str:
        text: str = self._tok.decode([token_id], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return text

    def bos_text(self) -> str:
        return self._tok.bos_token if self._add_bos else ""

    def eos_text(self) -> str:
        return self._eos_text

    def chat_template(self) -> str | None:
        template = getattr(self._tok, "chat_template", None)
        return template if isinstance(template, str) else None

    def facts(self) -> BackendFacts:
        params = list(self._model.parameters())
        return BackendFacts(
            architecture=str(getattr(self._model.config, "model_type", "") or ""),
            n_params=sum(p.numel() for p in params),
            quantization=str(self.dtype).removeprefix("torch."),
            size_bytes=sum(p.numel() * p.element_size() for p in params),
            device=self.device_kind,
            tokenizer=f"transformers {self._transformers_version} ({type(self._tok).__name__})",
        )

    # -- scoring -----------------------------------------------------------

    def label_logits(self, prompts: Sequence[Sequence[int]],
                     token_ids: Sequence[int]) -> npt.NDArray[np.float64]:
        out = np.empty((len(prompts), len(token_ids)), dtype=np.float64)
        if not prompts:
            return out
        for i, p in enumerate(prompts):
            if not p:
                raise JudgelabError(f"Prompt #{i} has no tokens; a judgment needs at least one.")
        ids = self._torch.tensor(list(token_ids), dtype=self._torch.long)
        order = sorted(range(len(prompts)), key=lambda i: tuple(prompts[i]))
        ordered = [prompts[i] for i in order]
        runs = (
            prefix_groups(ordered, min_shared=self.config.min_shared_tokens)
            if self.config.share_prefixes
            else [(0, len(ordered), 0)]
        )
        alone: list[int] = []
        with self._lock:
            for lo, hi, shared in runs:
                if not shared:
                    alone.extend(order[lo:hi])
                    continue
                logits = self._shared_prefix_logits(ordered[lo][:shared], [p[shared:] for p in ordered[lo:hi]])
                out[order[lo:hi]] = logits[:, ids.to(logits.device)].double().cpu().numpy()
            groups = self._packs(prompts, alone) if self.config.pack else self._buckets(prompts, alone)
            for group in groups:
                batch = [prompts[i] for i in group]
                logits = self._packed_logits(batch) if self.config.pack else self._last_logits(batch)
                out[group] = logits[:, ids.to(logits.device)].double().cpu().numpy()
        return out

    def _packs(self, prompts: Sequence[Sequence[int]], which: Sequence[int]) -> list[list[int]]:
        """Indices of prompts in packs of at most the token budget (a longer prompt packs alone)."""
        budget = self._max_tokens or _AUTO_TOKENS[self.device_kind]
        packs: list[list[int]] = []
        current: list[int] = []
        size = 0
        for i in sorted(which, key=lambda i: len(prompts[i])):
            if current and (size + len(prompts[i]) > budget or len(current) >= self._max_rows):
                packs.append(current)
                current, size = [], 0
            current.append(i)
            size += len(prompts[i])
        if current:
            packs.append(current)
        return packs

    def _packed_logits(self, batch: list[Sequence[int]]) -> torch.Tensor:
        """Logits at the last token of each prompt, the prompts packed into one row, no padding."""
        torch = self._torch
        dev = self._input_device
        flat = torch.tensor([t for p in batch for t in p], dtype=torch.long, device=dev)[None]
        positions = torch.cat([torch.arange(len(p)) for p in batch]).to(dev)[None]
        ends = torch.tensor([len(p) for p in batch]).cumsum(0) - 1
        with torch.inference_mode():
            hidden = self._decoder(input_ids=flat, position_ids=positions, use_cache=False).last_hidden_state[0]
            logits = self._output_logits(hidden[ends.to(hidden.device)])
        self._count_pass(sum(len(p) for p in batch))
        return logits.float()

    def _count_pass(self, computed: int, *, padded: int = 0) -> None:
        """One forward pass: ``computed`` real tokens and ``padded`` padding positions."""
        self.forward_passes += 1
        self.tokens_evaluated += computed
        self.tokens_padded += padded

    def _output_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The output layer (and a final logit soft-cap, when the model has one) on hidden states."""
        logits = self._model.get_output_embeddings()(hidden)
        if self._softcap:
            logits = self._torch.tanh(logits / self._softcap) * self._softcap
        out: Tensor = logits
        return out

    def _buckets(self, prompts: Sequence[Sequence[int]], which: Sequence[int] | None = None) -> list[list[int]]:
        """Indices of prompts (``which``, default all) in batches of similar length (shortest first).

        A batch is cut when it would exceed the row or token budget, or when
        padding would exceed ``_MAX_PADDING`` of its tokens.
        """
        which = range(len(prompts)) if which is None else which
        order = sorted(which, key=lambda i: len(prompts[i]))
        buckets: list[list[int]] = []
        current: list[int] = []
        real = 0
        for i in order:
            longest = len(prompts[i])  # sorted: the newcomer is the longest
            rows = len(current) + 1
            fits_rows = rows <= self._max_rows
            fits_tokens = self._max_tokens is None or rows * longest <= self._max_tokens
            fits_padding = rows * longest - (real + longest) <= _MAX_PADDING * rows * longest
            if current and not (fits_rows and fits_tokens and fits_padding):
                buckets.append(current)
                current, real = [], 0
            current.append(i)
            real += longest
        if current:
            buckets.append(current)
        return buckets

    def _shared_prefix_logits(self, prefix: Sequence[int], suffixes: list[Sequence[int]]) -> torch.Tensor:
        """Logits after ``prefix + suffix`` for each suffix, the prefix computed once.

        The prefix runs alone and keeps its key/values; each batch of
        suffixes runs over a copy of them, expanded to the batch. Suffixes
        are right-padded, so every real token sits at its own position in
        the cache (sliding-window layers see the same distances as when the
        prompt runs whole), and the last real token's hidden state of each
        row goes through the output layer.
        """
        torch = self._torch
        dev = self._input_device
        n = len(prefix)
        with torch.inference_mode():
            result = self._model(
                input_ids=torch.tensor([list(prefix)], dtype=torch.long, device=dev),
                position_ids=torch.arange(n, device=dev)[None],
                use_cache=True,
                logits_to_keep=1,
            )
        cache = getattr(result, self._cache_kw)
        self._count_pass(n)
        rows_out = []
        budget = (self._max_tokens or 1 << 30)
        start = 0
        while start < len(suffixes):
            # rows of one batch: within the row budget and the token budget (prefix included)
            end = start + 1
            while end < len(suffixes) and end - start < self._max_rows:
                width = max(len(s) for s in suffixes[start:end + 1])
                if (end + 1 - start) * (n + width) > budget:
                    break
                end += 1
            rows_out.append(self._suffix_batch(cache, n, suffixes[start:end]))
            start = end
        rows: Tensor = torch.cat(rows_out)
        return rows

    def _suffix_batch(self, cache: Cache, n: int, batch: list[Sequence[int]]) -> torch.Tensor:
        torch = self._torch
        dev = self._input_device
        rows, width = len(batch), max(len(s) for s in batch)
        input_ids = torch.full((rows, width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((rows, n + width), dtype=torch.long)
        mask[:, :n] = 1
        lengths = torch.tensor([len(s) for s in batch], dtype=torch.long)
        for row, s in enumerate(batch):
            input_ids[row, : len(s)] = torch.tensor(list(s), dtype=torch.long)
            mask[row, n : n + len(s)] = 1
        positions = torch.arange(n, n + width)[None].expand(rows, width)
        copied = copy.deepcopy(cache)
        if rows > 1:
            copied.batch_repeat_interleave(rows)
        kwargs = {self._decoder_cache_kw: copied}
        if self._decoder_takes_cache_position:
            kwargs["cache_position"] = torch.arange(n, n + width, device=dev)
        with torch.inference_mode():
            hidden = self._decoder(
                input_ids=input_ids.to(dev),
                attention_mask=mask.to(dev),
                position_ids=positions.to(dev),
                use_cache=True,
                **kwargs,
            ).last_hidden_state
            last = hidden[torch.arange(rows, device=hidden.device), (lengths - 1).to(hidden.device)]
            logits = self._output_logits(last)
        self._count_pass(int(lengths.sum()), padded=rows * width - int(lengths.sum()))
        return logits.float()

    def _last_logits(self, batch: list[Sequence[int]]) -> torch.Tensor:
        """Logits at the last token of each prompt: a (len(batch), vocab) tensor."""
        torch = self._torch
        width = max(len(p) for p in batch)
        input_ids = torch.full((len(batch), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, p in enumerate(batch):
            input_ids[row, width - len(p):] = torch.tensor(list(p), dtype=torch.long)
            mask[row, width - len(p):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        dev = self._input_device
        with torch.inference_mode():
            result = self._model(
                input_ids=input_ids.to(dev),
                attention_mask=mask.to(dev),
                position_ids=positions.to(dev),
                use_cache=False,
                logits_to_keep=1,
            )
        real = sum(len(p) for p in batch)
        self._count_pass(real, padded=len(batch) * width - real)
        last: Tensor = result.logits[:, -1, :].float()
        return last

    def next_logits(self, tokens: Sequence[int]) -> npt.NDArray[np.float64]:
        """Full-vocabulary logits after ``tokens``; extending the previous call reuses its KV cache."""
        torch = self._torch
        tokens = list(tokens)
        if not tokens:
            raise JudgelabError("next_logits needs at least one token.")
        with self._lock:
            n = len(self._cached_tokens)
            reuse = self._cache is not None and n < len(tokens) and tokens[:n] == self._cached_tokens
            if not reuse:
                self._cache, n = None, 0
            new = torch.tensor([tokens[n:]], dtype=torch.long, device=self._input_device)
            with torch.inference_mode():
                result = self._model(
                    input_ids=new,
                    **{self._cache_kw: self._cache},
                    position_ids=torch.arange(n, len(tokens), device=self._input_device)[None],
                    use_cache=True,
                    logits_to_keep=1,
                )
            self._cache = getattr(result, self._cache_kw)
            self._cached_tokens = tokens
            self._count_pass(len(tokens) - n)
            last_row: npt.NDArray[np.float64] = result.logits[0, -1].double().cpu().numpy()
            return last_row

    def is_end_of_generation(self, token_id: int) -> bool:
        return int(token_id) in self._eog

    def detokenize(self, token_ids: Sequence[int]) -> str:
        text: str = self._tok.decode(list(token_ids), skip_special_tokens=True, clean_up_tokenization_spaces=False)
        return text

    # -- lifecycle -----------------------------------------------------------

    def reset_cache(self) -> None:
        """Forget next_logits' KV cache."""
        with self._lock:
            self._cache, self._cached_tokens = None, []

    def close(self) -> None:
        with self._lock:
            self._cache, self._cached_tokens = None, []
            self._model = None
            if self.device_kind == "cuda":
                self._torch.cuda.empty_cache()
