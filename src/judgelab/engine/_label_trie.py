"""Labels read as token sequences: a trie over the labels' tokens.

When two labels start with the same token ("GRADE: C" and "GRADE: I"), the
next-token distribution after the prompt cannot tell them apart, but their
token sequences differ further on. A label's probability is then the product
of its tokens' conditional probabilities, each restricted to the label set:
at every position, the softmax over only the tokens that continue some label
written so far. That is the distribution of decoding constrained to the
labels, and for labels that part at their last token it equals the labels'
full-sequence likelihoods normalised over the set::

    P("GRADE: C") = P(" C" | prompt "GRADE:") / (P(" C" | ...) + P(" I" | ...))

The labels form a trie. A position with one continuation ("GRADE", ":") has
restricted probability 1: its tokens are only appended to the prompt (the
*prefix*, paid for by its prefill, shared by every prompt's labels). Only the
positions where labels part (*branches*) are read, each as single-token labels
are read: the logits of its few continuations (batched, shared prefixes, the
label head). "GRADE: C" / "GRADE: I" costs one judgment of a prompt two tokens
longer; "[[A]]" / "[[B]]" the same ("]]" after the letter is the one way on).

Labels whose token sequences are equal, or one of which starts another's
(``"1"`` and ``"10"`` where digits are single tokens), cannot be told apart
without reading past the label and are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.engine._backend import Backend
from judgelab.errors import LabelError

__all__ = ["LabelSequences", "build_sequences", "form_scores", "scores_with_mass", "sequence_scores"]

Node = tuple[int, ...]


@dataclass(frozen=True)
class LabelSequences:
    """The token sequences of a label set, arranged as a trie.

    ``forms[k]`` is one way of writing label ``owner[k]`` (the tokens it adds
    after a prompt); a label may have several forms (``label_variants`` of the
    model spec), whose probabilities add up.
    """

    forms: tuple[Node, ...]
    owner: tuple[int, ...]
    prefix: Node
    """Tokens every form starts with: appended to the prompt."""
    branches: tuple[tuple[Node, tuple[int, ...]], ...]
    """The positions where forms part (tokens after the prefix; the first is ``()``) and the tokens that follow each."""

    @property
    def branch_ids(self) -> tuple[int, ...]:
        """Every token read at some branch, each once (the ids given to the backend)."""
        return tuple(dict.fromkeys(t for _, children in self.branches for t in children))

    @property
    def longest(self) -> int:
        """Tokens of the longest form."""
        return max(len(f) for f in self.forms)


def _refuse(labels: Sequence[str], a: int, b: int, *, prefix_of: bool, tokenizer: str) -> LabelError:
    which = f" with the tokenizer of {tokenizer}" if tokenizer else ""
    how = f"starts with all the tokens of {labels[a]!r}" if prefix_of else "has the same tokens as " + repr(labels[a])
    return LabelError(
        f"Labels {labels[a]!r} and {labels[b]!r} cannot be told apart{which}: {labels[b]!r} {how}, so "
        "the judge would have to read past the label to choose. Use labels that differ within their "
        "own tokens (for example 'Score: 01' .. 'Score: 10', or single letters).",
        labels=tuple(labels),
    )


def build_sequences(
    labels: Sequence[str], forms: Sequence[Sequence[Sequence[int]]], *, tokenizer: str = ""
) -> LabelSequences:
    """The trie of ``forms[i]``, the token sequences of ``labels[i]``.

    Raises
    ------
    LabelError
        When a label has no tokens, or one label's tokens equal or start another's.
    """
    flat: list[tuple[Node, int]] = []
    for i, label_forms in enumerate(forms):
        distinct = list(dict.fromkeys(tuple(f) for f in label_forms if f))
        if not distinct:
            raise LabelError(f"Label {labels[i]!r} produces no tokens.", labels=tuple(labels))
        flat.extend((f, i) for f in distinct)
    ordered = sorted(flat)  # a form that starts another sorts right before it, or before forms between them
    for k, (form, i) in enumerate(ordered):
        for other, j in ordered[k + 1:]:
            if other[: len(form)] != form:
                break
            if j != i or other == form:
                raise _refuse(labels, i, j, prefix_of=other != form, tokenizer=tokenizer)
    all_forms = [f for f, _ in flat]
    n = 0
    while all(len(f) > n + 1 and f[n] == all_forms[0][n] for f in all_forms):
        n += 1
    rests = [f[n:] for f in all_forms]
    children: dict[Node, dict[int, None]] = {}
    for rest in rests:
        for depth in range(len(rest)):
            children.setdefault(rest[:depth], {})[rest[depth]] = None
    return LabelSequences(
        forms=tuple(all_forms),
        owner=tuple(i for _, i in flat),
        prefix=all_forms[0][:n],
        branches=tuple((node, tuple(kids)) for node, kids in children.items() if len(kids) > 1),
    )


def _log_softmax(logits: ArrayLike) -> npt.NDArray[np.float64]:
    logits = np.asarray(logits, dtype=np.float64)
    top = float(np.max(logits))
    return logits - (top + float(np.log(np.exp(logits - top).sum())))


def form_scores(seqs: LabelSequences, branch_logits: Mapping[Node, ArrayLike]) -> npt.NDArray[np.float64]:
    """Each form's log-probability restricted to the label set, after the prompt and prefix.

    ``branch_logits[node]`` are the logits of the tokens that follow ``node``
    (``seqs.branches``' order) after the prompt, the prefix and ``node``.
    """
    restricted = {node: dict(zip(kids, _log_softmax(branch_logits[node]))) for node, kids in seqs.branches}
    out = np.zeros(len(seqs.forms), dtype=np.float64)
    p = len(seqs.prefix)
    for k, form in enumerate(seqs.forms):
        rest = form[p:]
        for depth in range(len(rest)):
            at = restricted.get(rest[:depth])
            if at is not None:  # one way on elsewhere: probability 1
                out[k] += at[rest[depth]]
    return out


def sequence_scores(backend: Backend, seqs: LabelSequences, token_lists: Sequence[Sequence[int]]) -> npt.NDArray[np.float64]:
    """``form_scores`` of every prompt: an array ``(len(token_lists), len(seqs.forms))``.

    All branches of all prompts go to the backend in one ``label_logits``
    call (the prompt plus prefix plus branch, sorted by the backend so that a
    prompt's branches extend its cached prefill by a token or two).
    """
    ids = seqs.branch_ids
    where = {t: j for j, t in enumerate(ids)}
    queries = [[*toks, *seqs.prefix, *node] for toks in token_lists for node, _ in seqs.branches]
    logits = backend.label_logits(queries, ids)
    rows = []
    for i in range(len(token_lists)):
        at = {
            node: [logits[i * len(seqs.branches) + b][where[t]] for t in kids]
            for b, (node, kids) in enumerate(seqs.branches)
        }
        rows.append(form_scores(seqs, at))
    return np.stack(rows) if rows else np.empty((0, len(seqs.forms)))


def scores_with_mass(next_logits: Callable[[list[int]], npt.NDArray[np.float64]], seqs: LabelSequences,
                     tokens: Sequence[int]) -> tuple[npt.NDArray[np.float64], float]:
    """``form_scores`` after ``tokens`` from full-vocabulary logits, and the labels' share of the model's distribution.

    The share (``Judgment.label_mass``) is the probability that the model,
    unconstrained, writes one of the forms: the product of each form's
    full-vocabulary conditional probabilities, prefix included, summed.
    """
    cache: dict[Node, npt.NDArray[np.float64]] = {}

    def logprobs(head: Node) -> npt.NDArray[np.float64]:
        if head not in cache:
            cache[head] = _log_softmax(next_logits([*tokens, *head]))
        return cache[head]

    full = np.zeros(len(seqs.forms), dtype=np.float64)
    for k, form in enumerate(seqs.forms):
        for depth in range(len(form)):
            full[k] += float(logprobs(form[:depth])[form[depth]])
    at = {node: logprobs(seqs.prefix + node)[list(kids)] for node, kids in seqs.branches}
    return form_scores(seqs, at), float(np.exp(full).sum())
