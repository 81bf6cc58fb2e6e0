"""Spring AI's evaluation SPI, in Python.

Mirrors ``org.springframework.ai.evaluation``: an ``EvaluationRequest`` carries
the user's text, the supporting documents and the response to judge; an
``Evaluator`` turns it into an ``EvaluationResponse``. Unlike Spring AI's
evaluators, judgelab's return a probability as the score and never leave the
feedback or metadata empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from judgelab.errors import ParameterTypeError
from judgelab.evaluators._detail import JudgmentDetail

__all__ = [
    "Document",
    "EvaluationRequest",
    "EvaluationResponse",
    "Evaluator",
    "BaseEvaluator",
    "evaluate_many",
]


@dataclass(frozen=True)
class Document:
    """A piece of supporting data (Spring AI's ``Document``)."""

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EvaluationRequest:
    """What an evaluator judges.

    Parameters
    ----------
    user_text
        The user's text. Its role depends on the evaluator: the query for
        ``RelevancyEvaluator``, the document for ``FactCheckingEvaluator``.
    data_list
        Supporting documents (``Document`` objects or plain strings; strings
        are wrapped into ``Document``).
    response_content
        The response (or claim) being judged.
    """

    user_text: str
    data_list: Sequence[Document] = ()
    response_content: str = ""

    def __post_init__(self) -> None:
        docs = tuple(_as_document(d) for d in (self.data_list or ()))
        object.__setattr__(self, "data_list", docs)

    @property
    def documents_text(self) -> list[str]:
        """The non-blank document texts, in order."""
        return [d.text for d in self.data_list if d.text.strip()]


def documents_of(items: Iterable[Document | str]) -> tuple[Document, ...]:
    """``items`` as ``Document`` values (a string becomes a document without metadata)."""
    return tuple(_as_document(d) for d in items)


def _as_document(item: Document | str) -> Document:
    if isinstance(item, Document):
        return item
    if isinstance(item, str):
        return Document(item)
    text = getattr(item, "text", None)
    if isinstance(text, str):
        return Document(text, dict(getattr(item, "metadata", {}) or {}))
    raise ParameterTypeError(
        f"data_list items must be Document or str, got {type(item).__name__!s}"
    )


@dataclass(frozen=True, repr=False)
class EvaluationResponse:
    """An evaluator's answer.

    ``score`` is a probability-like number in [0, 1] (1 = passes), ``passed``
    is the thresholded verdict, ``feedback`` says why in words and
    ``metadata`` holds what was measured (label probabilities, chunks, model).
    ``detail`` is the same measurement as a typed ``JudgmentDetail``
    (judgelab's evaluators always set it; read it with ``judgment_detail``,
    which falls back to ``metadata`` for other evaluators).

    Its ``repr`` names the score, the threshold (or the policy's decision)
    and the feedback, so a failing ``assert response.passed`` explains itself.
    """

    passed: bool
    score: float
    feedback: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    detail: JudgmentDetail | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        meta = self.metadata if isinstance(self.metadata, Mapping) else {}
        parts = [f"passed={self.passed!r}", f"score={_short_float(self.score)}"]
        threshold = meta.get("threshold", getattr(self.detail, "threshold", None))
        if meta.get("decision") is not None:
            parts.append(f"decision={meta['decision']!r}")
        elif threshold is not None:
            parts.append(f"threshold={_short_float(threshold)}")
        parts.append(f"feedback={self.feedback!r}")
        return f"EvaluationResponse({', '.join(parts)})"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (metadata values must already be JSON-ready)."""
        return {
            "passed": self.passed,
            "score": self.score,
            "feedback": self.feedback,
            "metadata": dict(self.metadata),
        }


def _short_float(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else repr(value)


@runtime_checkable
class Evaluator(Protocol):
    """Anything that can judge an ``EvaluationRequest``."""

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse: ...


class BaseEvaluator:
    """Base for judgelab's evaluators: ``evaluate`` is ``evaluate_many`` of one.

    Subclasses implement ``evaluate_many`` so that the engine can order and
    batch the work of many requests together.
    """

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        return self.evaluate_many([request])[0]

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        raise NotImplementedError


def evaluate_many(
    evaluator: Evaluator, requests: Iterable[EvaluationRequest]
) -> list[EvaluationResponse]:
    """Judge many requests, batched when the evaluator supports it."""
    batch = getattr(evaluator, "evaluate_many", None)
    requests = list(requests)
    if callable(batch):
        return list(batch(requests))
    return [evaluator.evaluate(r) for r in requests]
