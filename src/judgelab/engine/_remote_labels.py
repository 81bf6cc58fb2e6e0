"""Reading a label distribution from a server's answer: top logprobs pooled per label, or reply text.

A server's top logprobs are over its whole vocabulary, truncated to the top
``k``. Each label pools the alternatives whose text is one of its variants
(the spec's ``label_variants``, else the case and leading-space forms: the
same forms the in-process engine pools), and the distribution is the pooled
mass renormalised over the labels, as in process. What the top ``k`` left
out is not guessed:

- ``label_mass``: the labels' share of the whole next-token distribution;
- ``outside_mass``: the mass outside the returned top ``k`` (an upper bound
  on what a label missing from them could have had);
- no label among the top ``k`` at all: a ``RemoteError`` (``no_label``), so
  the row becomes an error record, never a score.

Text mode (servers without logprobs) reads the label word the reply starts
with and scores it 1, the others 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from judgelab.engine._labels import default_variants
from judgelab.errors import RemoteError

__all__ = ["LabelReading", "pool_top_logprobs", "read_label_text"]


@dataclass(frozen=True)
class LabelReading:
    """A label distribution read from a server, with what it could not see."""

    probabilities: dict[str, float]
    label_mass: float | None = None
    outside_mass: float | None = None
    missing: tuple[str, ...] = ()
    """Labels none of whose variants were among the top ``k`` (probability 0 here, at most ``outside_mass``)."""


def pool_top_logprobs(
    top: Sequence[tuple[str, float]],
    labels: Sequence[str],
    variants: Mapping[str, Sequence[str]] | None = None,
    *,
    where: str = "",
) -> LabelReading:
    """The label distribution in a server's top logprobs.

    Parameters
    ----------
    top
        ``(token text, logprob)`` alternatives at the first generated position.
    labels
        The label words.
    variants
        Token texts that stand for each label; the case and leading-space
        forms (``default_variants``) for labels not in it.
    where
        The server and model, for the error message.

    Raises
    ------
    RemoteError
        When no variant of any label is among ``top`` (``reason="no_label"``).
    """
    variants = variants or {}
    owner = {form: i for i, label in enumerate(labels) for form in (variants.get(label) or default_variants(label))}
    mass = [0.0] * len(labels)
    total = 0.0
    for token, logprob in top:
        p = math.exp(logprob) if logprob > -math.inf else 0.0
        total += p
        if token in owner:
            mass[owner[token]] += p
    label_mass = sum(mass)
    if label_mass <= 0.0:
        shown = ", ".join(repr(t) for t, _ in sorted(top, key=lambda e: -e[1])[:5])
        raise RemoteError(f"None of the labels {list(labels)} is among the {len(top)} most likely next tokens{where} "
                          f"(top: {shown}); the judge did not answer with a label. Raise top_logprobs or check "
                          "the prompt.", reason="no_label")
    probabilities = {label: m / label_mass for label, m in zip(labels, mass)}
    missing = tuple(label for label, m in zip(labels, mass) if m == 0.0)
    return LabelReading(probabilities, min(1.0, label_mass), max(0.0, 1.0 - total), missing)


def read_label_text(text: str, labels: Sequence[str], *, where: str = "") -> LabelReading:
    """The label a reply starts with (case, spaces and punctuation around it ignored), scored 1.

    Raises
    ------
    RemoteError
        When the reply starts with none of the labels (``reason="no_label"``).
    """
    reply = text.strip().strip("\"'*`.:!()[]").strip().lower()
    found = [label for label in labels
             if reply.startswith(label.strip().lower())
             and not reply[len(label.strip()):len(label.strip()) + 1].isalnum()]
    if not found:
        raise RemoteError(f"The reply {text[:60]!r}{where} starts with none of the labels {list(labels)}; text mode "
                          "cannot score it.", reason="no_label")
    best = max(found, key=lambda label: len(label.strip()))
    return LabelReading({label: 1.0 if label == best else 0.0 for label in labels})
