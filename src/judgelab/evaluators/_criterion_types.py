"""Criteria: a named question (or code check) with the rule that decides it.

Rules, per criterion type:

- ``NoulCriterion``: passes iff P(yes) >= ``minimum``. Never inconclusive,
  unless the judge sets ``noul_min_confidence``: then ``max(p, 1 - p)``
  below it is INCONCLUSIVE.
- ``ChoiceCriterion``: passes iff at least half the probability is on the
  ``accepted`` options.
- ``ScoreCriterion``: passes iff at least half the probability is on levels
  >= ``ceil(minimum)``.
- For choices and scores, when the share of probability that supports the
  verdict (the accepted share if it passed, the rest if it failed) is below
  the judge's ``min_confidence``, the finding is INCONCLUSIVE.
- ``CheckCriterion``: ``predicate(state)`` runs locally; ``False`` fails.
- Any criterion with ``applies_when`` is NOT_APPLICABLE when that predicate
  returns false. A predicate that raises gives ERROR.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from judgelab.errors import QuestionError
from judgelab.evaluators._verdict import Finding, Outcome
from judgelab.questions import Choice, ChoiceAnswer, Noul, NoulAnswer, Question, Score, ScoreAnswer

__all__ = [
    "Predicate",
    "Criterion",
    "NoulCriterion",
    "ChoiceCriterion",
    "ScoreCriterion",
    "CheckCriterion",
    "Rules",
    "decide",
    "check_finding",
    "error_finding",
    "not_applicable_finding",
]

Predicate = Callable[[Mapping[str, Any]], bool]


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise QuestionError(f"A criterion name must be a non-blank string, got {name!r}.")
    return name.strip()


def _check_callable(value: object, what: str, name: str) -> None:
    if value is not None and not callable(value):
        raise QuestionError(
            f"Criterion {name!r}: {what} must be a callable taking the state, got {type(value).__name__}.",
            name=name,
        )


@dataclass(frozen=True)
class NoulCriterion:
    """A yes/no question that passes when P(yes) >= ``minimum``."""

    name: str
    noul: Noul
    minimum: float = 0.5
    applies_when: Predicate | None = None

    def __post_init__(self) -> None:
        name = _check_name(self.name)
        object.__setattr__(self, "name", name)
        if not isinstance(self.noul, Noul):
            raise QuestionError(f"Criterion {name!r}: expected a Noul, got {type(self.noul).__name__}.", name=name)
        if not 0.0 <= float(self.minimum) <= 1.0:
            raise QuestionError(
                f"Criterion {name!r}: a noul's minimum is a probability in [0, 1], got {self.minimum}.",
                name=name,
            )
        _check_callable(self.applies_when, "applies_when", name)

    @property
    def question(self) -> Question:
        return self.noul


@dataclass(frozen=True)
class ChoiceCriterion:
    """A choice that passes when at least half the probability is on ``accepted`` options."""

    name: str
    choice: Choice
    accepted: tuple[str, ...]
    applies_when: Predicate | None = None
    defect: str | None = None

    def __post_init__(self) -> None:
        name = _check_name(self.name)
        object.__setattr__(self, "name", name)
        if not isinstance(self.choice, Choice):
            raise QuestionError(f"Criterion {name!r}: expected a Choice, got {type(self.choice).__name__}.", name=name)
        accepted = (self.accepted,) if isinstance(self.accepted, str) else tuple(self.accepted)
        if not accepted:
            raise QuestionError(
                f"Criterion {name!r}: name the accepted options, one or more of {list(self.choice.labels)}.",
                name=name,
            )
        unknown = [a for a in accepted if a not in self.choice.options]
        if unknown:
            raise QuestionError(
                f"Criterion {name!r}: accepted options {unknown} are not options of the choice "
                f"({list(self.choice.labels)}).",
                name=name,
            )
        object.__setattr__(self, "accepted", tuple(dict.fromkeys(accepted)))
        _check_callable(self.applies_when, "applies_when", name)

    @property
    def question(self) -> Question:
        return self.choice


@dataclass(frozen=True)
class ScoreCriterion:
    """A score that passes when at least half the probability is on levels >= ``ceil(minimum)``."""

    name: str
    score: Score
    minimum: float
    applies_when: Predicate | None = None
    defect: str | None = None

    def __post_init__(self) -> None:
        name = _check_name(self.name)
        object.__setattr__(self, "name", name)
        if not isinstance(self.score, Score):
            raise QuestionError(f"Criterion {name!r}: expected a Score, got {type(self.score).__name__}.", name=name)
        top = len(self.score.levels) - 1
        if not 0.0 <= float(self.minimum) <= top:
            raise QuestionError(
                f"Criterion {name!r}: a score's minimum is a level in [0, {top}], got {self.minimum}.",
                name=name,
            )
        _check_callable(self.applies_when, "applies_when", name)

    @property
    def question(self) -> Question:
        return self.score

    @property
    def passing_level(self) -> int:
        return math.ceil(float(self.minimum) - 1e-12)


@dataclass(frozen=True)
class CheckCriterion:
    """A code check: ``predicate(state)`` must return True; ``defect`` says what is wrong otherwise."""

    name: str
    predicate: Predicate
    defect: str
    applies_when: Predicate | None = None

    def __post_init__(self) -> None:
        name = _check_name(self.name)
        object.__setattr__(self, "name", name)
        if not callable(self.predicate):
            raise QuestionError(f"Criterion {name!r}: the predicate must be callable.", name=name)
        if not isinstance(self.defect, str) or not self.defect.strip():
            raise QuestionError(
                f"Criterion {name!r}: a check needs a defect text saying what is wrong when it fails.",
                name=name,
            )
        _check_callable(self.applies_when, "applies_when", name)

    @property
    def question(self) -> None:
        return None


Criterion = NoulCriterion | ChoiceCriterion | ScoreCriterion | CheckCriterion


@dataclass(frozen=True)
class Rules:
    """The judge-wide settings the rules read."""

    min_confidence: float = 0.5
    noul_min_confidence: float | None = None


def error_finding(name: str, exc: BaseException) -> Finding:
    return Finding(name, Outcome.ERROR, None, f"{name}: {type(exc).__name__}: {exc}")


def not_applicable_finding(name: str) -> Finding:
    return Finding(name, Outcome.NOT_APPLICABLE, None, f"{name}: not applicable")


def check_finding(criterion: CheckCriterion, result: object) -> Finding:
    """The finding of a code check from what its predicate returned."""
    name = criterion.name
    if not isinstance(result, (bool, np.bool_)):
        return Finding(
            name,
            Outcome.ERROR,
            None,
            f"{name}: the predicate must return True or False, it returned {result!r}",
        )
    ok = bool(result)
    if ok:
        return Finding(name, Outcome.PASSED, True, f"{name}: passed", 1.0)
    return Finding(name, Outcome.FAILED, False, f"{name}: {criterion.defect.strip()}", 0.0)


def decide(criterion: Criterion, answer: Any, rules: Rules) -> Finding:
    """The finding of a model question from its answer."""
    if isinstance(criterion, NoulCriterion):
        return _decide_noul(criterion, answer, rules)
    if isinstance(criterion, ChoiceCriterion):
        return _decide_choice(criterion, answer, rules)
    if isinstance(criterion, ScoreCriterion):
        return _decide_score(criterion, answer, rules)
    raise TypeError(f"decide() takes a model criterion, got {type(criterion).__name__}")


def _decide_noul(c: NoulCriterion, a: NoulAnswer, rules: Rules) -> Finding:
    p, minimum = a.probability, float(c.minimum)
    measured = f"scored {p:.2f}, needs at least {minimum:.2f}"
    if rules.noul_min_confidence is not None and a.confidence < rules.noul_min_confidence:
        return Finding(
            c.name,
            Outcome.INCONCLUSIVE,
            a,
            f"{c.name}: undecided between yes and no ({measured}; confidence {a.confidence:.2f} "
            f"is below {rules.noul_min_confidence:.2f})",
            p,
        )
    if p >= minimum:
        return Finding(c.name, Outcome.PASSED, a, f"{c.name}: passed ({measured})", p)
    q = c.noul
    defect = q.when_false or (
        f"Does not hold: {q.when_true}" if q.when_true else f"Answered no to: {q.instructions}"
    )
    return Finding(c.name, Outcome.FAILED, a, f"{c.name}: {defect} ({measured})", p)


def _supported(passed: bool, share: float, rules: Rules) -> bool:
    support = share if passed else 1.0 - share
    return support >= rules.min_confidence


def _decide_choice(c: ChoiceCriterion, a: ChoiceAnswer, rules: Rules) -> Finding:
    share = float(sum(a.probabilities[o] for o in c.accepted))
    passed = share >= 0.5
    top = a.choice
    measured = f"{share:.2f} on accepted options {', '.join(c.accepted)}, needs at least 0.50"
    if not _supported(passed, share, rules):
        return Finding(
            c.name,
            Outcome.INCONCLUSIVE,
            a,
            f"{c.name}: inconclusive, most likely {top!r} ({measured}; the verdict needs "
            f"{rules.min_confidence:.2f} of the probability on its side)",
            share,
        )
    if passed:
        return Finding(c.name, Outcome.PASSED, a, f"{c.name}: chose {top!r} ({measured})", share)
    description = c.choice.options[top]
    defect = c.defect or (f"Chose {top!r}: {description}" if description else f"Chose {top!r}")
    return Finding(c.name, Outcome.FAILED, a, f"{c.name}: {defect} ({measured})", share)


def _decide_score(c: ScoreCriterion, a: ScoreAnswer, rules: Rules) -> Finding:
    k = c.passing_level
    share = a.share_at_least(k)
    passed = share >= 0.5
    measured = f"expected level {a.expected:.2f}; {share:.2f} on levels >= {k}, needs at least 0.50"
    if not _supported(passed, share, rules):
        return Finding(
            c.name,
            Outcome.INCONCLUSIVE,
            a,
            f"{c.name}: inconclusive, most likely level {a.level} ({measured}; the verdict needs "
            f"{rules.min_confidence:.2f} of the probability on its side)",
            share,
        )
    if passed:
        return Finding(c.name, Outcome.PASSED, a, f"{c.name}: level {a.level} ({measured})", share)
    defect = c.defect or f"Rated level {a.level}: {c.score.levels[a.level]}"
    return Finding(c.name, Outcome.FAILED, a, f"{c.name}: {defect} ({measured})", share)

