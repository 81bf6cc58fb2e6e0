"""``BackendJudgeModel``: the ``JudgeModel`` over a backend: a prompt and a closed set of labels in, probabilities out."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from judgelab.engine._backend import Backend, Prefilling
from judgelab.engine._info import ModelInfo
from judgelab.engine._label_trie import LabelSequences, build_sequences, scores_with_mass, sequence_scores
from judgelab.engine._labels import ResolvedLabels, resolve_labels
from judgelab.engine._prompt import Prompt, render_prompt
from judgelab.engine._token_cache import TokenCache
from judgelab.errors import ContextLengthError, JudgelabError, LabelError
from judgelab.specs import ModelSpec

__all__ = ["BackendJudgeModel", "Judgment"]

# Texts after which a label is tokenised as the model would write it; the
# first whose tokens a label leaves unchanged is used (see ``_label_tokens``).
_LABEL_CONTEXTS = ("Answer:", "\n", ".", "Answer:\n")


@dataclass(frozen=True)
class Judgment:
    """The answer to one closed question: the most likely label and the distribution.

    ``probability`` is P(``label``) and ``probabilities`` every label's, normalised over the labels
    and keyed by the label words exactly as they were asked (``"Yes"``, ``"No"``); every layer above
    keeps those keys, through an evaluator's metadata to ``scores.jsonl``.
    """

    label: str
    probability: float
    probabilities: dict[str, float]
    prompt_tokens: int = 0
    logprobs: dict[str, float] = field(default_factory=dict)
    label_mass: float | None = None
    """Share of the full next-token distribution on the label tokens (``JudgeModel.label_mass``)."""


class BackendJudgeModel:
    """A loaded judge model: the ``JudgeModel`` protocol over a ``Backend``.

    Every judge question is answered from one prefill of the prompt: the
    logits of the label tokens at the last position, softmaxed over the labels
    only (each label pooling its variants, e.g. "Yes" and " yes").

    Use :func:`judgelab.engine.load_model` to get one. Safe to share between
    threads; calls are serialised on the model.
    """

    def __init__(self, backend: Backend, spec: ModelSpec) -> None:
        self.backend = backend
        self.spec = spec
        self._label_cache: dict[tuple[str, ...], ResolvedLabels] = {}
        self._lock = threading.RLock()
        self.stats = {"judgments": 0, "prompt_tokens": 0}
        #: When true, judgments read the full output layer and report ``Judgment.label_mass``
        #: (opt-in: it costs the full-vocabulary logits of every prompt).
        self.label_mass = False
        # Evaluators tokenize a prompt several times (to size chunks, then to
        # judge it) and a document once per claim: each is tokenised once.
        self._token_cache = TokenCache()

    # -- facts ---------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def n_ctx(self) -> int:
        return self.backend.n_ctx

    def info(self) -> ModelInfo:
        """The loaded model's facts (spec, backend, weights) as one frozen value."""
        facts = self.backend.facts()
        fmt = self.spec.prompt
        own = self.backend.chat_template()
        template = fmt.raw_template if fmt.style == "raw" else (fmt.chat_template or own or "")
        return ModelInfo(
            id=self.id,
            family=self.spec.family,
            format=self.spec.format,
            backend=self.backend.name,
            n_ctx=self.n_ctx,
            architecture=facts.architecture,
            n_params=facts.n_params,
            quantization=facts.quantization,
            size_bytes=facts.size_bytes,
            device=facts.device,
            prompt_style=fmt.style,
            prompt_template=template,
            chat_template=own,
            system=fmt.system or "",
            spec_hash=self.spec.spec_hash,
            description=self.spec.description,
        )

    def __repr__(self) -> str:
        return f"BackendJudgeModel(id={self.id!r}, backend={self.backend.name!r}, n_ctx={self.n_ctx})"

    # -- prompts -------------------------------------------------------------

    def render(self, user: str, *, system: str | None = None) -> Prompt:
        """The prompt for a user turn, in this model's prompt format.

        ``system`` overrides the spec's system prompt ('' removes it). The
        result is a ``Prompt`` (a ``str``) that remembers which parts are
        ``user`` and ``system``: those are tokenised as plain text, so a
        ``<start_of_turn>`` or ``<eos>`` in them stays text; only the
        template's own markers become control tokens.
        """
        return render_prompt(
            self.spec.prompt,
            user,
            system=system,
            model_template=self.backend.chat_template(),
            bos_text=self.backend.bos_text(),
            eos_text=self.backend.eos_text(),
            model_id=self.id,
        )

    def tokenize(self, text: str) -> list[int]:
        """Token ids of a whole prompt (with BOS when the model uses one).

        A ``Prompt`` from ``render`` keeps its plain parts plain. A plain
        ``str`` is the caller's own full prompt text (e.g. Ollama's
        ``raw: true``): special-token strings in it are parsed as control
        tokens, as the model's tokenizer does.
        """
        return self._tokens(text, True)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as a plain-text fragment (no BOS, no control tokens)."""
        return len(self._tokens(Prompt.plain(text), False))

    def _tokens(self, text: str, add_bos: bool) -> list[int]:
        spans = text.plain_spans if isinstance(text, Prompt) else None
        key = (str(text), spans, add_bos)
        if isinstance(text, Prompt) and spans:
            pieces = text.pieces()
            return self._token_cache.get(key, lambda: self.backend.tokenize_pieces(pieces, add_bos=add_bos))
        return self._token_cache.get(key, lambda: self.backend.tokenize(str(text), add_bos=add_bos))

    def resolve_labels(self, labels: Sequence[str]) -> ResolvedLabels:
        """The token ids that stand for each label (cached)."""
        key = tuple(labels)
        with self._lock:
            if key not in self._label_cache:
                self._label_cache[key] = resolve_labels(
                    key,
                    self._label_tokens,
                    spec_variants=self.spec.label_variants,
                    tokenizer=self._tokenizer_name(),
                    on_shared=self._resolve_sequences,
                )
            return self._label_cache[key]

    def _resolve_sequences(self, labels: tuple[str, ...]) -> ResolvedLabels:
        """Labels that share their first tokens, read as token sequences (``_label_trie``).

        Each label is written as given (or as the spec's ``label_variants`` of it):
        case and space forms are not pooled, since a multi-token label is a format
        the prompt asks for ("GRADE: C").
        """
        variants = self.spec.label_variants or {}
        forms = [[self._label_tokens(v) for v in (variants.get(lab) or [lab])] for lab in labels]
        seqs = build_sequences(labels, forms, tokenizer=self._tokenizer_name())
        n_tokens = tuple(
            min(len(f) for f, o in zip(seqs.forms, seqs.owner, strict=True) if o == i) for i in range(len(labels))
        )
        return ResolvedLabels(labels, (), (), n_tokens, seqs)

    def _tokenizer_name(self) -> str:
        facts = getattr(self.backend, "facts", None)  # a backend written before facts() existed
        return facts().tokenizer if facts is not None else self.backend.name

    def _label_tokens(self, text: str) -> list[int]:
        """The tokens ``text`` adds when written after a prompt.

        Tokenising a label on its own is not that: some tokenizers start
        every text with a prefix-space token (transformers 5.17's conversion
        of Gemma's) or add a leading space (SentencePiece's
        ``add_dummy_prefix``). So the label is tokenised after a short
        context, and its tokens are what the context's tokens are followed
        by, provided appending it left the context's own tokens unchanged.
        """
        for context in _LABEL_CONTEXTS:
            base = self.backend.tokenize(context, add_bos=False)
            full = self.backend.tokenize(context + text, add_bos=False)
            if len(full) > len(base) and full[: len(base)] == base:
                return full[len(base):]
        return self.backend.tokenize(text, add_bos=False)

    # -- judging -------------------------------------------------------------

    def probabilities(self, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """P(label | prompt) over ``labels``, from one prefill.

        Raises
        ------
        ContextLengthError
            When the prompt has more tokens than the context holds.
        LabelError
            When the labels cannot be read as distinct tokens.
        """
        return self.batch_probabilities([prompt], labels)[0]

    def batch_probabilities(
        self, prompts: Sequence[str], labels: Sequence[str]
    ) -> list[dict[str, float]]:
        """``probabilities`` for many prompts; shared prefixes are computed once."""
        return [j.probabilities for j in self.judge_many(prompts, labels)]

    def check_prompt(self, prompt: str, *, what: str = "prompt") -> int:
        """The prompt's token count, checked against the context.

        Raises
        ------
        ContextLengthError
            When the prompt has more tokens than the context holds.
        JudgelabError
            When the prompt has no token at all (an empty prompt on a model without a start token).
        """
        n = len(self._tokens(prompt, True))
        if n == 0:
            raise JudgelabError(
                f"The {what} is empty after tokenisation and {self.spec.id} adds no start token, so there is no "
                "next-token distribution to read; give the judge some text."
            )
        if n > self.n_ctx:
            raise ContextLengthError(n, self.n_ctx, what=what)
        return n

    def check_label_fits(
        self, labels: Sequence[str], label: str, max_tokens: int, *, option: str = "max_tokens"
    ) -> int:
        """The tokens ``label`` (one of ``labels``) takes, checked against ``max_tokens``.

        Raises
        ------
        LabelError
            When writing the label needs more than ``max_tokens`` tokens.
        """
        resolved = self.resolve_labels(labels)
        n = resolved.n_tokens[resolved.labels.index(label)]
        if n > max_tokens:
            raise LabelError(
                f"Label {label!r} takes {n} tokens but {option} is {max_tokens}; "
                f"raise {option} or use single-token labels.",
                labels=tuple(labels),
            )
        return n

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
        """The full ``Judgment`` (label, distribution, token count) of each prompt."""
        resolved = self.resolve_labels(labels)
        for i, p in enumerate(prompts):
            self.check_prompt(p, what="prompt" if len(prompts) == 1 else f"prompt #{i}")
        token_lists = [self.tokenize(p) for p in prompts]
        if resolved.sequences is not None:
            return self._judge_sequences(resolved, resolved.sequences, token_lists)
        if self.label_mass:
            return self._judge_with_mass(resolved, token_lists)
        logits = self.backend.label_logits(token_lists, resolved.token_ids)
        with self._lock:
            self.stats["judgments"] += len(prompts)
            self.stats["prompt_tokens"] += sum(len(t) for t in token_lists)
        return [
            _judgment(resolved.labels, resolved.owner, row, len(toks)) for row, toks in zip(logits, token_lists)
        ]

    def _judge_sequences(self, resolved: ResolvedLabels, seqs: LabelSequences,
                         token_lists: Sequence[Sequence[int]]) -> list[Judgment]:
        """``judge_many`` for labels read as token sequences: the prefix once, then each branch (``_label_trie``)."""
        for i, toks in enumerate(token_lists):
            if len(toks) + seqs.longest - 1 > self.n_ctx:
                what = "prompt plus its labels' tokens" + ("" if len(token_lists) == 1 else f" (prompt #{i})")
                raise ContextLengthError(len(toks) + seqs.longest - 1, self.n_ctx, what=what)
        # log-domain scores of each label form (``_label_trie.form_scores``): logits, not yet probabilities
        form_scores: list[npt.NDArray[np.float64]]
        masses: list[float | None]
        if self.label_mass:
            pairs = [scores_with_mass(self.backend.next_logits, seqs, toks) for toks in token_lists]
            form_scores, masses = [s for s, _ in pairs], [m for _, m in pairs]
        else:
            form_scores = list(sequence_scores(self.backend, seqs, token_lists))
            masses = [None] * len(token_lists)
        with self._lock:
            self.stats["judgments"] += len(token_lists)
            self.stats["prompt_tokens"] += sum(len(t) for t in token_lists)
        out = []
        for row, toks, mass in zip(form_scores, token_lists, masses, strict=True):
            j = _judgment(resolved.labels, seqs.owner, row, len(toks))
            out.append(Judgment(j.label, j.probability, j.probabilities, j.prompt_tokens, j.logprobs, mass))
        return out

    def _judge_with_mass(self, resolved: ResolvedLabels, token_lists: Sequence[Sequence[int]]) -> list[Judgment]:
        """``judge_many`` from the full output layer, with the labels' share of it."""
        ids = np.asarray(resolved.token_ids)
        out = []
        for toks in token_lists:
            full = np.asarray(self.backend.next_logits(toks), dtype=np.float64)
            top = float(np.max(full))
            mass = float(np.exp(full[ids] - top).sum() / np.exp(full - top).sum())
            j = _judgment(resolved.labels, resolved.owner, full[ids], len(toks))
            out.append(Judgment(j.label, j.probability, j.probabilities, j.prompt_tokens, j.logprobs, mass))
        with self._lock:
            self.stats["judgments"] += len(token_lists)
            self.stats["prompt_tokens"] += sum(len(t) for t in token_lists)
        return out

    @property
    def can_prefill(self) -> bool:
        """Whether ``prefill`` evaluates a prompt in pieces (llama.cpp, unpacked); else it does nothing."""
        return isinstance(self.backend, Prefilling) and bool(self.backend.supports_prefill)

    def prefill(self, prompt: str, max_tokens: int) -> int:
        """Evaluate up to ``max_tokens`` more of ``prompt``'s tokens ahead of judging it; the tokens still to do.

        For a scheduler that must not hold the model for a whole long prompt:
        it evaluates a piece, serves other requests, and comes back. The
        backend keeps the piece's cache while other prompts are scored, so
        the judgment that follows (``judge_many``) evaluates only the rest and
        gives the same numbers as without pieces. Returns the prompt's full
        token count when the backend cannot (``can_prefill`` is false).
        """
        tokens = self.tokenize(prompt)
        if not (isinstance(self.backend, Prefilling) and self.backend.supports_prefill):  # can_prefill
            return len(tokens)
        return int(self.backend.prefill(tokens, max_tokens))

    def judge(self, prompt: str, labels: Sequence[str]) -> Judgment:
        """The ``Judgment`` of one prompt."""
        return self.judge_many([prompt], labels)[0]

    def generate(
        self, prompt: str, max_tokens: int = 2, allowed: Sequence[str] | None = None
    ) -> str:
        """Greedy decoding restricted to ``allowed`` labels: exactly one label.

        The most likely label is written and decoding stops there (the next
        token would be end of turn), so the text is always exactly one of
        the labels, never two glued together.

        Raises
        ------
        LabelError
            When no labels are given, or the chosen label needs more than
            ``max_tokens`` tokens.
        """
        if not allowed:
            raise LabelError("generate() needs the allowed labels, e.g. allowed=['Yes', 'No'].")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        judgment = self.judge(prompt, allowed)
        self.check_label_fits(allowed, judgment.label, max_tokens)
        return judgment.label

    def complete(self, prompt: str, max_tokens: int = 256, stop: Sequence[str] = ()) -> str:
        """Free greedy text after ``prompt``, up to ``max_tokens`` or a stop string.

        For the few places a judge must write (Flow-Judge's feedback before
        its score); judge answers themselves never go through here.
        """
        tokens = self.tokenize(prompt)
        if len(tokens) + max_tokens > self.n_ctx:
            raise ContextLengthError(len(tokens) + max_tokens, self.n_ctx, what="prompt plus max_tokens")
        generated: list[int] = []
        with self._lock:
            for _ in range(max_tokens):
                token = int(np.argmax(self.backend.next_logits(tokens + generated)))
                if self.backend.is_end_of_generation(token):
                    break
                generated.append(token)
                if stop:
                    text = self.backend.detokenize(generated)
                    hit = min((text.find(s) for s in stop if s in text), default=-1)
                    if hit >= 0:
                        return text[:hit]
        return self.backend.detokenize(generated)

    def reset_caches(self) -> None:
        """Forget cached prefixes (the backend's KV cache) and tokenizations.

        For benchmarks and memory pressure; results do not depend on caches.
        """
        self._token_cache.clear()
        self.backend.reset_cache()

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> "BackendJudgeModel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _judgment(labels: Sequence[str], owner: Sequence[int], token_logits: npt.NDArray[np.float64], n_tokens: int) -> Judgment:
    """The judgment from the logits of each label's tokens (or forms); ``owner[k]`` is the label of the k-th."""
    top = float(np.max(token_logits))
    weights = np.exp(token_logits - top)
    per_label = np.bincount(np.asarray(owner), weights=weights, minlength=len(labels))
    total = float(per_label.sum())
    probs = per_label / total
    # log P(label) restricted to the labels, stable for tiny probabilities
    logprobs = {
        lab: (math.log(p) if p > 0 else -math.inf) for lab, p in zip(labels, probs)
    }
    best = int(np.argmax(probs))
    return Judgment(
        label=labels[best],
        probability=float(probs[best]),
        probabilities={lab: float(p) for lab, p in zip(labels, probs)},
        prompt_tokens=n_tokens,
        logprobs=logprobs,
    )
