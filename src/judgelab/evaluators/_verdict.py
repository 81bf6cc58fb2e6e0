"""A criteria judge's verdict: one ``Finding`` per criterion, and the feedback."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["Outcome", "Finding", "Verdict", "verdict_from_findings"]


class Outcome(StrEnum):
    """How one criterion came out."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    INCONCLUSIVE = "INCONCLUSIVE"
    """The model's probability did not support either verdict strongly enough."""
    ERROR = "ERROR"
    """The criterion could not be evaluated (its predicate raised, its prompt did not fit...)."""
    NOT_APPLICABLE = "NOT_APPLICABLE"
    """Its ``applies_when`` predicate said it does not apply to this input."""


@dataclass(frozen=True)
class Finding:
    """The outcome of one criterion.

    Attributes
    ----------
    name
        The criterion's name.
    outcome
        ``Outcome``.
    answer
        What was measured: a ``NoulAnswer``, ``ChoiceAnswer`` or
        ``ScoreAnswer`` for model questions, the predicate's ``bool`` for a
        code check, ``None`` when not applicable or on error.
    detail
        One line that says why, starting with the name
        ("is_grounded: Introduces facts the context does not support (scored
        0.42, needs at least 0.70)").
    score
        The number the rule compared: P(yes) for a noul, the probability on
        accepted options for a choice, on passing levels for a score, 1.0 or
        0.0 for a check; ``None`` when not applicable or on error.
    """

    name: str
    outcome: Outcome
    answer: Any
    detail: str
    score: float | None = None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        answer = self.answer
        if dataclasses.is_dataclass(answer) and not isinstance(answer, type):
            answer = {k: (dict(v) if hasattr(v, "items") else v) for k, v in dataclasses.asdict(answer).items()}
        return {
            "name": self.name,
            "outcome": self.outcome.value,
            "answer": answer,
            "detail": self.detail,
            "score": self.score,
        }


@dataclass(frozen=True)
class Verdict:
    """Every criterion's finding and whether the input passed.

    ``passed`` is true iff no finding FAILED (INCONCLUSIVE counts as failed
    only with ``fail_on_inconclusive``, ERROR only with ``fail_on_error``).
    ``feedback`` lists the failures, then the inconclusive and erroneous
    checks; it is empty when the verdict passed.
    """

    passed: bool
    findings: tuple[Finding, ...]
    feedback: str

    @property
    def outcomes(self) -> dict[str, str]:
        """``{name: "PASSED" | "FAILED" | ...}`` in criterion order."""
        return {f.name: f.outcome.value for f in self.findings}

    def __getitem__(self, name: str) -> Finding:
        for finding in self.findings:
            if finding.name == name:
                return finding
        raise KeyError(f"No criterion named {name!r}; criteria: {[f.name for f in self.findings]}")

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {
            "passed": self.passed,
            "findings": [f.to_dict() for f in self.findings],
            "feedback": self.feedback,
        }


def verdict_from_findings(
    findings: Sequence[Finding], *, fail_on_inconclusive: bool = False, fail_on_error: bool = False
) -> Verdict:
    """Apply the pass rule and write the feedback."""
    failing = {Outcome.FAILED}
    if fail_on_inconclusive:
        failing.add(Outcome.INCONCLUSIVE)
    if fail_on_error:
        failing.add(Outcome.ERROR)
    passed = not any(f.outcome in failing for f in findings)
    return Verdict(passed, tuple(findings), "" if passed else _feedback(findings))


def _feedback(findings: Sequence[Finding]) -> str:
    lines = [f.detail for f in findings if f.outcome is Outcome.FAILED]
    for outcome, heading in (
        (Outcome.INCONCLUSIVE, "The following checks were inconclusive:"),
        (Outcome.ERROR, "The following checks could not be evaluated:"),
    ):
        group = [f.detail for f in findings if f.outcome is outcome]
        if group:
            lines.append(heading)
            lines.extend(f"- {d}" for d in group)
    return "\n".join(lines)
