"""Rubrics for Flow-Judge's response metrics: correctness, faithfulness, relevance.

Each comes as a binary (0/1), 3-point (1..3) and 5-point (1..5) scale, named
``"<metric>-<scale>"`` (``"faithfulness-5point"``). The scales and the inputs
each metric reads follow Flow-Judge's presets; the wording is judgelab's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType

from judgelab.errors import QuestionError

__all__ = ["Rubric", "RubricItem", "RUBRIC_PRESETS", "rubric_items"]


@dataclass(frozen=True)
class RubricItem:
    """One score of a rubric and what earns it."""

    score: int
    description: str


@dataclass(frozen=True)
class Rubric:
    """Evaluation criteria and the scores of a rubric.

    ``documents_as`` names the input tag the request's documents are shown
    under (``context``, or ``reference_answer`` for correctness).
    """

    name: str
    criteria: str
    items: tuple[RubricItem, ...]
    documents_as: str = "context"

    def __post_init__(self) -> None:
        items = rubric_items(self.items)
        scores = [i.score for i in items]
        if len(items) < 2:
            raise QuestionError(f"Rubric {self.name!r} needs at least 2 scores, got {scores}.")
        if len(set(scores)) != len(scores) or any(not 0 <= s <= 9 for s in scores):
            raise QuestionError(
                f"Rubric {self.name!r}: scores must be distinct single digits 0-9 (each is read "
                f"as one token), got {scores}."
            )
        object.__setattr__(self, "items", tuple(sorted(items, key=lambda i: i.score)))

    @property
    def low(self) -> int:
        return self.items[0].score

    @property
    def high(self) -> int:
        return self.items[-1].score


def rubric_items(items: Iterable[RubricItem | tuple[int, str]]) -> tuple[RubricItem, ...]:
    """``items`` as ``RubricItem`` values (a ``(score, description)`` pair is converted)."""
    return tuple(i if isinstance(i, RubricItem) else RubricItem(int(i[0]), str(i[1])) for i in items)


def _r(name: str, criteria: str, documents_as: str, *descriptions: str) -> Rubric:
    first = 0 if len(descriptions) == 2 else 1
    return Rubric(
        name,
        criteria,
        tuple(RubricItem(first + i, d) for i, d in enumerate(descriptions)),
        documents_as,
    )


_PRESETS = [
    _r(
        "correctness-binary",
        "Does the response give the same answer to the query as the reference answer?",
        "reference_answer",
        "The response does not match the reference answer: it is wrong, leaves out key "
        "information, adds information the reference does not have, or means something else.",
        "The response matches the reference answer: it has all the key information, nothing wrong, "
        "nothing missing and nothing added, and it means the same.",
    ),
    _r(
        "correctness-3point",
        "Measured against the reference answer, how correctly does the response answer the query?",
        "reference_answer",
        "The response does not match the reference at all: it misses the query or answers it wrongly.",
        "The response partly matches the reference: it addresses the query but has some wrong, "
        "irrelevant or missing information.",
        "The response fully matches the reference: it answers the query correctly and completely, "
        "with nothing wrong or extraneous.",
    ),
    _r(
        "correctness-5point",
        "How closely does the response match the reference answer in accuracy and completeness "
        "when answering the query?",
        "reference_answer",
        "Entirely wrong or off the query; it shares no information with the reference.",
        "Some correct, relevant information, but much is missing or wrong compared with the reference.",
        "A reasonably accurate answer that misses key details or has small errors.",
        "An accurate, nearly complete answer that leaves out only non-essential details.",
        "As accurate and as detailed as the reference, with all of its key information.",
    ),
    _r(
        "faithfulness-binary",
        "Does the response contain only information that the context states or that follows "
        "directly from it?",
        "context",
        "The response has claims that the context neither states nor implies: some information "
        "is made up.",
        "Every claim in the response is stated in the context or follows from it: nothing is made up.",
    ),
    _r(
        "faithfulness-3point",
        "How faithful is the response to the context? Look for made-up content that the context "
        "does not support.",
        "context",
        "Much of the response is made up or contradicts the context.",
        "Mostly faithful, with a few minor details the context does not support.",
        "Completely faithful: every detail is supported by the context.",
    ),
    _r(
        "faithfulness-5point",
        "How consistent with the context is the response? It should contain nothing that the "
        "context does not support.",
        "context",
        "Completely inconsistent: much of it is made up or contradicts the context.",
        "Mostly inconsistent: some context, but a lot of made-up detail.",
        "Partly consistent: a mix of context and minor made-up details.",
        "Mostly consistent: nearly everything is supported, with at most small slips.",
        "Completely consistent: every detail is supported by the context.",
    ),
    _r(
        "relevance-binary",
        "Does the response address the query directly, given the context, without irrelevant "
        "or extraneous content?",
        "context",
        "The response does not address the query well: it misses the question, drifts off "
        "topic, or adds material nobody asked for.",
        "The response addresses the query directly and sufficiently, and all of it is relevant.",
    ),
    _r(
        "relevance-3point",
        "How relevant is the response to the query, without extraneous or irrelevant content?",
        "context",
        "Not relevant: it misses the key points of the query or is all extraneous.",
        "Partly relevant: it covers some of the query but drifts or misses key points.",
        "Highly relevant: it addresses every key point of the query and nothing else.",
    ),
    _r(
        "relevance-5point",
        "How well does the response address the query with relevant information and nothing "
        "extraneous?",
        "context",
        "Completely irrelevant to the query.",
        "Mostly irrelevant: touches the query only in passing, with much unrelated content.",
        "Somewhat relevant: gets the main point but drifts or misses aspects of the query.",
        "Largely relevant: addresses the key points with little extraneous content.",
        "Highly relevant: addresses every aspect of the query directly and thoroughly.",
    ),
]

RUBRIC_PRESETS = MappingProxyType({r.name: r for r in _PRESETS})
"""Flow-Judge style rubrics by name: ``{correctness,faithfulness,relevance}-{binary,3point,5point}``."""
