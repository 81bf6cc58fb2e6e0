"""Turning label words into the token ids whose logits answer a question.

A label such as "Yes" may be written by the model as "Yes", " Yes", "yes" or
" yes"; each of these that is a single token is a *variant*, and the label's
probability pools its variants. Variants come from the model spec
(``label_variants``) or, by default, from the case and leading-space forms of
the word. A label with no single-token variant is read from its first token,
provided no other label starts with that token. When labels do share their
first tokens ("GRADE: C", "GRADE: I"), ``resolve_labels`` hands them to
``on_shared``, which reads them as token sequences (``_label_trie``); without
it they are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from judgelab.engine._label_trie import LabelSequences
from judgelab.errors import LabelError

__all__ = ["ResolvedLabels", "default_variants", "resolve_labels"]


@dataclass(frozen=True)
class ResolvedLabels:
    """Labels with the token ids that stand for each."""

    labels: tuple[str, ...]
    token_ids: tuple[int, ...]
    """All distinct token ids, in a fixed order."""
    owner: tuple[int, ...]
    """``owner[j]`` is the index into ``labels`` of ``token_ids[j]``."""
    n_tokens: tuple[int, ...]
    """How many tokens the shortest form of each label takes (1 for most)."""
    sequences: LabelSequences | None = None
    """The labels' token sequences, when they share their first tokens (then ``token_ids`` is empty)."""

    def tokens_of(self, label_index: int) -> list[int]:
        return [t for t, o in zip(self.token_ids, self.owner) if o == label_index]


def default_variants(label: str) -> list[str]:
    """The case and leading-space forms of a label word, without duplicates."""
    word = label.strip()
    forms = [label, word, word.lower(), word.capitalize(), word.upper()]
    out: list[str] = []
    for form in forms:
        for candidate in (form, " " + form):
            if candidate.strip() and candidate not in out:
                out.append(candidate)
    return out


def resolve_labels(
    labels: Sequence[str],
    tokenize: Callable[[str], list[int]],
    *,
    spec_variants: Mapping[str, Sequence[str]] | None = None,
    tokenizer: str = "",
    on_shared: Callable[[tuple[str, ...]], ResolvedLabels] | None = None,
) -> ResolvedLabels:
    """Resolve label words to token ids with ``tokenize`` (no BOS added).

    ``tokenize(text)`` gives the tokens ``text`` adds after a prompt;
    ``tokenizer`` names the tokenizer (library and version) in errors.
    Labels whose first tokens are shared are resolved by ``on_shared(labels)``
    when it is given (as token sequences), else refused.

    Raises
    ------
    LabelError
        Fewer than two labels, duplicate labels, or (without ``on_shared``) a
        token shared by two labels or a multi-token label whose first token
        another label also starts with.
    """
    labels = tuple(labels)
    if len(labels) < 2:
        raise LabelError(f"A judge question needs at least two labels, got {list(labels)}.", labels=labels)
    if len({lab.strip().lower() for lab in labels}) != len(labels):
        raise LabelError(
            f"Labels {list(labels)} are not distinct once case and spaces are ignored; "
            "their probabilities could not be told apart.",
            labels=labels,
        )
    spec_variants = spec_variants or {}
    per_label: list[list[int]] = []
    lengths: list[int] = []
    for label in labels:
        variants = list(spec_variants.get(label) or default_variants(label))
        tokenised = [t for t in (tokenize(v) for v in variants) if t]
        ids = list(dict.fromkeys(t[0] for t in tokenised if len(t) == 1))
        if not ids:  # no single-token form: read the label from its first token
            ids = list(dict.fromkeys(t[0] for t in tokenised))
        if not ids:
            raise LabelError(f"Label {label!r} produces no tokens.", labels=labels)
        per_label.append(ids)
        lengths.append(min(len(t) for t in tokenised))

    seen: dict[int, int] = {}
    for i, ids in enumerate(per_label):
        for tok in ids:
            if tok in seen and seen[tok] != i:
                if on_shared is not None:
                    return on_shared(labels)
                which = f" with the tokenizer of {tokenizer}" if tokenizer else ""
                raise LabelError(
                    f"Labels {labels[seen[tok]]!r} and {labels[i]!r} share the token {tok}{which}, so "
                    "the model's next-token distribution cannot tell them apart. Use labels that "
                    "start differently (for example single letters or single words); if these "
                    "labels work with another version of that library, this tokenizer is not "
                    "supported: use a supported version (see docs/transformers.md).",
                    labels=labels,
                )
            seen[tok] = i
    token_ids = tuple(seen)
    owner = tuple(seen[t] for t in token_ids)
    return ResolvedLabels(labels, token_ids, owner, tuple(lengths))
