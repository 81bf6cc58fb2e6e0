"""``CriteriaJudge``: typed criteria with per-criterion thresholds, one verdict.

The Python form of TypeSafe's JevJudge: each criterion is a typed question
(``Noul``, ``Choice``, ``Score``) answered by a local model from one prefill,
or a code check that runs locally. Every criterion gives a ``Finding``
(PASSED, FAILED, INCONCLUSIVE, ERROR or NOT_APPLICABLE); the ``Verdict``
passes iff none FAILED. A criterion that cannot be evaluated is an ERROR
finding, never an exception that loses the other criteria's work.

Example
-------
>>> judge = (
...     CriteriaJudge.builder(model)
...     .noul("is_grounded", Noul(
...         "Is every claim in `assistant_answer` supported by `supporting_context`?",
...         when_false="Introduces facts the context does not support"), 0.7)
...     .check("not_empty", lambda s: bool(s["assistant_answer"].strip()), "The answer is empty")
...     .build()
... )  # doctest: +SKIP
>>> judge.judge(question="...", answer="...", context=["..."]).passed  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from judgelab.errors import QuestionError
from judgelab.evaluators._criterion_types import (
    CheckCriterion,
    ChoiceCriterion,
    Criterion,
    NoulCriterion,
    Predicate,
    Rules,
    ScoreCriterion,
    check_finding,
    decide,
    error_finding,
    not_applicable_finding,
)
from judgelab.evaluators._verdict import Finding, Verdict, verdict_from_findings
from judgelab.questions import Choice, Noul, Question, QuestionModel, Score, ask_all, check_state

__all__ = ["CriteriaJudge", "CriteriaJudgeBuilder", "make_state"]

# State field names shared with CriteriaEvaluator (the JevEvaluator mapping).
USER_QUESTION = "user_question"
ASSISTANT_ANSWER = "assistant_answer"
SUPPORTING_CONTEXT = "supporting_context"


def make_state(
    question: str | None = None,
    answer: str | None = None,
    context: Iterable[str] | None = None,
    **fields: object,
) -> dict[str, object]:
    """The state a criteria judge sees.

    ``question`` -> ``user_question``, ``answer`` -> ``assistant_answer``,
    ``context`` -> ``supporting_context`` (non-blank entries only; left out
    when there are none, so a criterion can tell "no evidence" from
    "evidence that says nothing"), then ``fields`` in the order given.
    ``None`` values are left out.
    """
    state: dict[str, object] = {}
    if question is not None:
        state[USER_QUESTION] = question
    if answer is not None:
        state[ASSISTANT_ANSWER] = answer
    if context is not None:
        if isinstance(context, str):
            context = [context]
        docs = [c for c in context if isinstance(c, str) and c.strip()]
        if docs:
            state[SUPPORTING_CONTEXT] = docs
    for key, value in fields.items():
        if value is not None:
            if key in state:
                raise QuestionError(f"State field {key!r} is given twice.", name=key)
            state[key] = value
    return state


def _check_probability(value: float, what: str) -> float:
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise QuestionError(f"{what} must be a probability in [0, 1], got {value}.")
    return value


class CriteriaJudge:
    """Typed criteria over a state, decided by one judge model.

    Parameters
    ----------
    model
        A loaded ``JudgeModel`` (may be ``None`` when every criterion is a
        code check).
    criteria
        ``NoulCriterion``, ``ChoiceCriterion``, ``ScoreCriterion`` and
        ``CheckCriterion`` values, in report order; names must be unique.
    min_confidence
        For choices and scores: a finding whose verdict has less than this
        share of the probability on its side is INCONCLUSIVE. The default,
        0.5, never makes a finding inconclusive.
    noul_min_confidence
        Opt-in for nouls: ``max(p, 1 - p)`` below it is INCONCLUSIVE.
    fail_on_inconclusive, fail_on_error
        Whether INCONCLUSIVE and ERROR findings fail the verdict.
    system
        System prompt for the questions; defaults to the model spec's.
    """

    def __init__(
        self,
        model: QuestionModel | None,
        criteria: Sequence[Criterion],
        *,
        min_confidence: float = 0.5,
        noul_min_confidence: float | None = None,
        fail_on_inconclusive: bool = False,
        fail_on_error: bool = False,
        system: str | None = None,
    ) -> None:
        criteria = tuple(criteria)
        if not criteria:
            raise QuestionError("A CriteriaJudge needs at least one criterion.")
        seen: set[str] = set()
        for c in criteria:
            if not isinstance(c, (NoulCriterion, ChoiceCriterion, ScoreCriterion, CheckCriterion)):
                raise QuestionError(
                    f"Not a criterion: {type(c).__name__}. Use NoulCriterion, ChoiceCriterion, "
                    "ScoreCriterion or CheckCriterion (or CriteriaJudge.builder(model))."
                )
            if c.name in seen:
                raise QuestionError(f"Two criteria are named {c.name!r}; names must be unique.", name=c.name)
            seen.add(c.name)
        if model is None and any(not isinstance(c, CheckCriterion) for c in criteria):
            raise QuestionError(
                "This judge asks the model questions (noul, choice or score criteria) but no model "
                "was given; pass a loaded model, e.g. load_model('gemma-3-270m')."
            )
        self.model = model
        self.criteria: tuple[Criterion, ...] = criteria
        self.rules = Rules(
            min_confidence=_check_probability(min_confidence, "min_confidence"),
            noul_min_confidence=(
                None
                if noul_min_confidence is None
                else _check_probability(noul_min_confidence, "noul_min_confidence")
            ),
        )
        self.fail_on_inconclusive = bool(fail_on_inconclusive)
        self.fail_on_error = bool(fail_on_error)
        self.system = system

    @classmethod
    def builder(cls, model: QuestionModel | None) -> "CriteriaJudgeBuilder":
        """A fluent builder, as in the Java API."""
        return CriteriaJudgeBuilder(model)

    def __repr__(self) -> str:
        model_id = getattr(self.model, "id", None)
        return f"CriteriaJudge(model={model_id!r}, criteria={[c.name for c in self.criteria]})"

    # -- judging -------------------------------------------------------------

    def judge(
        self,
        question: str | None = None,
        answer: str | None = None,
        context: Iterable[str] | None = None,
        **fields: object,
    ) -> Verdict:
        """Judge an answer to a question, with optional context and extra fields.

        See ``make_state`` for the field names the criteria see.
        """
        return self.judge_state(make_state(question, answer, context, **fields))

    def judge_state(self, state: Mapping[str, object]) -> Verdict:
        """Judge a state (an ordered mapping of field names to JSON-like values)."""
        return self.judge_states([state])[0]

    def judge_states(self, states: Sequence[Mapping[str, object]]) -> list[Verdict]:
        """Judge many states; the model's questions for all of them go to the engine together."""
        states = [check_state(s) for s in states]
        findings: list[list[Finding | None]] = [[None] * len(self.criteria) for _ in states]
        pending: list[tuple[int, int]] = []
        asks: list[tuple[Mapping[str, object], Question]] = []
        for si, state in enumerate(states):
            for ci, criterion in enumerate(self.criteria):
                early = self._before_model(criterion, state)
                question = criterion.question
                if early is not None:
                    findings[si][ci] = early
                elif question is not None:  # only a code check has none, and it is decided early
                    pending.append((si, ci))
                    asks.append((state, question))

        if pending:
            answers = ask_all(
                self.model,  # type: ignore[arg-type]  # checked in __init__
                asks,
                system=self.system,
                return_exceptions=True,
            )
            for (si, ci), answer in zip(pending, answers):
                criterion = self.criteria[ci]
                if isinstance(answer, BaseException):
                    findings[si][ci] = error_finding(criterion.name, answer)
                else:
                    findings[si][ci] = decide(criterion, answer, self.rules)

        return [
            verdict_from_findings(
                [f for f in row if f is not None],
                fail_on_inconclusive=self.fail_on_inconclusive,
                fail_on_error=self.fail_on_error,
            )
            for row in findings
        ]

    def _before_model(self, criterion: Criterion, state: Mapping[str, object]) -> Finding | None:
        """NOT_APPLICABLE, a code check's finding, or an ERROR; ``None`` when the model must answer."""
        if criterion.applies_when is not None:
            try:
                applies = criterion.applies_when(state)
            except Exception as exc:  # a user predicate: any failure is this criterion's error
                return error_finding(criterion.name, exc)
            if not applies:
                return not_applicable_finding(criterion.name)
        if isinstance(criterion, CheckCriterion):
            try:
                result = criterion.predicate(state)
            except Exception as exc:  # a user predicate
                return error_finding(criterion.name, exc)
            return check_finding(criterion, result)
        return None


class CriteriaJudgeBuilder:
    """Fluent construction of a ``CriteriaJudge`` (``CriteriaJudge.builder(model)``).

    Each method returns the builder; ``build()`` validates and returns the judge.
    """

    def __init__(self, model: QuestionModel | None) -> None:
        self._model = model
        self._criteria: list[Criterion] = []
        self._options: dict[str, Any] = {}

    def noul(
        self, name: str, noul: Noul, minimum: float = 0.5, *, applies_when: Predicate | None = None
    ) -> "CriteriaJudgeBuilder":
        """A yes/no criterion passing when P(yes) >= ``minimum``."""
        self._criteria.append(NoulCriterion(name, noul, minimum, applies_when))
        return self

    def choice(
        self,
        name: str,
        choice: Choice,
        *accepted: str,
        applies_when: Predicate | None = None,
        defect: str | None = None,
    ) -> "CriteriaJudgeBuilder":
        """A choice criterion passing when at least half the probability is on ``accepted``."""
        self._criteria.append(ChoiceCriterion(name, choice, accepted, applies_when, defect))
        return self

    def score(
        self,
        name: str,
        score: Score,
        minimum: float,
        *,
        applies_when: Predicate | None = None,
        defect: str | None = None,
    ) -> "CriteriaJudgeBuilder":
        """A score criterion passing when at least half the probability is on levels >= ceil(minimum)."""
        self._criteria.append(ScoreCriterion(name, score, minimum, applies_when, defect))
        return self

    def check(
        self, name: str, predicate: Predicate, defect: str, *, applies_when: Predicate | None = None
    ) -> "CriteriaJudgeBuilder":
        """A code check: ``predicate(state)`` must return True."""
        self._criteria.append(CheckCriterion(name, predicate, defect, applies_when))
        return self

    def min_confidence(self, value: float) -> "CriteriaJudgeBuilder":
        self._options["min_confidence"] = value
        return self

    def noul_min_confidence(self, value: float | None) -> "CriteriaJudgeBuilder":
        self._options["noul_min_confidence"] = value
        return self

    def fail_on_inconclusive(self, value: bool = True) -> "CriteriaJudgeBuilder":
        self._options["fail_on_inconclusive"] = value
        return self

    def fail_on_error(self, value: bool = True) -> "CriteriaJudgeBuilder":
        self._options["fail_on_error"] = value
        return self

    def system(self, value: str | None) -> "CriteriaJudgeBuilder":
        self._options["system"] = value
        return self

    def build(self) -> CriteriaJudge:
        return CriteriaJudge(self._model, self._criteria, **self._options)
