"""Labels read as token sequences: a trie over the labels' tokens.

When two labels start with the same token ("GRADE: C" and "GRADE: I"), the
next-token distribution after the prompt cannot tell them apart, but their
token sequences differ further on. A label's probability is then the
likelihood of its whole token sequence, normalised over the label set::

    P(label | prompt) = P(tokens of label | prompt) / sum over labels l of P(tokens of l | prompt)

where ``P(t_1..t_n | prompt)`` is the product of each token's conditional
probability given the prompt and the tokens before it.

The labels form a trie. The tokens every label starts with (the *prefix*,
``"GRADE:"``) are appended to the prompt: their probability is shared by every
label and cancels, so they cost only their prefill. At the end of the prefix
the labels branch; the logits of the branch tokens are read as single-token
labels are (batched, shared prefixes, the label head), and the normaliser of
that position cancels too. Only labels that go on after their branch token
(``"[[A]]"`` / ``"[[B]]"``: ``"]]"`` after the letter) need more: the full
next-token distribution at each further position of the trie, once per
position and prompt.

Labels whose token sequences are equal, or one of which starts another's
(``"1"`` and ``"10"`` where digits are single tokens), cannot be told apart
without reading past the label and are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from judgelab.engine._backend import Backend
from judgelab.errors import LabelError

__all__ = ["LabelSequences", "build_sequences", "form_scores", "full_form_logprobs", "sequence_scores"]

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
    branch_ids: tuple[int, ...]
    """The distinct tokens right after the prefix, where the forms part."""
    nodes: tuple[Node, ...]
    """Positions after the branch (tokens after the prefix) whose full next-token distribution is read."""

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
    return LabelSequences(
        forms=tuple(all_forms),
        owner=tuple(i for _, i in flat),
        prefix=all_forms[0][:n],
        branch_ids=tuple(dict.fromkeys(r[0] for r in rests)),
        nodes=tuple(dict.fromkeys(r[:k] for r in rests for k in range(1, len(r)))),
    )


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    top = float(np.max(logits))
    return logits - (top + float(np.log(np.exp(logits - top).sum())))


def form_scores(
    seqs: LabelSequences, branch_logits: Sequence[float], node_logprobs: Mapping[Node, np.ndarray]
) -> np.ndarray:
    """Each form's log-likelihood after the prompt and prefix, up to a constant shared by all forms.

    ``branch_logits`` are the logits of ``seqs.branch_ids`` after the prefix;
    ``node_logprobs[node]`` the full next-token log-probabilities after the
    prefix and ``node``.
    """
    branch = dict(zip(seqs.branch_ids, np.asarray(branch_logits, dtype=np.float64)))
    out = np.empty(len(seqs.forms), dtype=np.float64)
    p = len(seqs.prefix)
    for k, form in enumerate(seqs.forms):
        rest = form[p:]
        score = branch[rest[0]]
        for depth in range(1, len(rest)):
            score += float(node_logprobs[rest[:depth]][rest[depth]])
        out[k] = score
    return out


def sequence_scores(backend: Backend, seqs: LabelSequences, token_lists: Sequence[Sequence[int]]) -> np.ndarray:
    """``form_scores`` of every prompt: an array ``(len(token_lists), len(seqs.forms))``.

    Without positions after the branch, all prompts go to the backend at once
    (its batching and prefix sharing as for single-token labels); otherwise
    each prompt is followed by its own further positions, which extend the
    cache that prompt left.
    """
    extended = [[*toks, *seqs.prefix] for toks in token_lists]
    if not seqs.nodes:
        branch = backend.label_logits(extended, seqs.branch_ids)
        return np.stack([form_scores(seqs, row, {}) for row in branch]) if extended else np.empty((0, 0))
    rows = []
    for toks in extended:
        branch = backend.label_logits([toks], seqs.branch_ids)[0]
        nodes = {node: _log_softmax(backend.next_logits([*toks, *node])) for node in seqs.nodes}
        rows.append(form_scores(seqs, branch, nodes))
    return np.stack(rows)


def full_form_logprobs(next_logits: Callable[[list[int]], np.ndarray], seqs: LabelSequences,
                       tokens: Sequence[int]) -> np.ndarray:
    """Each form's full log-likelihood after ``tokens`` (prefix included), from full-vocabulary logits.

    ``exp`` of the result sums to the share of the model's distribution that
    writes one of the labels (``Judgment.label_mass``).
    """
    cache: dict[Node, np.ndarray] = {}
    out = np.zeros(len(seqs.forms), dtype=np.float64)
    for k, form in enumerate(seqs.forms):
        for depth in range(len(form)):
            head = form[:depth]
            if head not in cache:
                cache[head] = _log_softmax(next_logits([*tokens, *head]))
            out[k] += float(cache[head][form[depth]])
    return out
