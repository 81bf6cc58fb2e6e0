"""``SelfRefine``: generate, judge, retry with the judge's feedback; bounded.

The recursive-advisor loop: ``generate(prompt, feedback)`` writes an answer
(``feedback`` is ``None`` on the first attempt, then the last failed
attempt's feedback); the evaluator judges it; the loop stops at the first
answer that passes or after ``max_attempts``. A generator or evaluator that
raises ends the loop; the error is recorded in the result, and the attempts
made so far are kept.

The judge is the evaluator's model, so the generator and the judge can (and
should) be different models: a model grading its own answers tends to favour
them (see ``judgelab.calibration``'s self-preference measurement).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from judgelab.errors import ParameterError, ParameterTypeError
from judgelab.evaluators._spi import Document, EvaluationRequest, EvaluationResponse, Evaluator, documents_of

__all__ = ["Attempt", "RefineResult", "SelfRefine"]

log = logging.getLogger(__name__)

Generate = Callable[[str, "str | None"], str]


@dataclass(frozen=True)
class Attempt:
    """One round: the feedback given to the generator, its answer, and the judge's response."""

    number: int
    feedback_in: str | None
    answer: str | None
    response: EvaluationResponse | None
    error: BaseException | None = None


@dataclass(frozen=True)
class RefineResult:
    """What the loop ended with.

    ``answer`` is the last answer generated (``None`` if there was none),
    ``passed`` whether it passed, ``attempts`` every round in order (each
    with its ``EvaluationResponse``), ``error`` the exception that ended the
    loop early, if any.
    """

    answer: str | None
    passed: bool
    attempts: tuple[Attempt, ...]
    error: BaseException | None = None

    @property
    def responses(self) -> list[EvaluationResponse]:
        """Every attempt's ``EvaluationResponse``, in order."""
        return [a.response for a in self.attempts if a.response is not None]


class SelfRefine:
    """Generate an answer, judge it, and retry with the feedback until it passes.

    Parameters
    ----------
    generate
        ``generate(prompt, feedback) -> str``; ``feedback`` is ``None`` on the
        first attempt.
    evaluator
        Any ``Evaluator``; each answer is judged as
        ``EvaluationRequest(user_text=prompt, data_list=documents,
        response_content=answer)``.
    max_attempts
        The most answers generated (>= 1).
    """

    def __init__(self, generate: Generate, evaluator: Evaluator, max_attempts: int = 3) -> None:
        if not callable(generate):
            raise ParameterTypeError("generate must be callable as generate(prompt, feedback) -> str")
        if not callable(getattr(evaluator, "evaluate", None)):
            raise ParameterTypeError(f"evaluator must have evaluate(request), got {type(evaluator).__name__}")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise ParameterError(f"max_attempts must be an int >= 1, got {max_attempts!r}")
        self.generate = generate
        self.evaluator = evaluator
        self.max_attempts = max_attempts

    def run(self, prompt: str, documents: Sequence[Document | str] = ()) -> RefineResult:
        """Refine an answer to ``prompt`` (with optional supporting documents)."""
        attempts: list[Attempt] = []
        feedback: str | None = None
        answer: str | None = None
        for number in range(1, self.max_attempts + 1):
            try:
                generated = self.generate(prompt, feedback)
                if not isinstance(generated, str):
                    raise ParameterTypeError(f"generate() must return a str, it returned {type(generated).__name__}")
            except Exception as exc:  # the generator is user code: record, do not lose the attempts
                log.warning("self-refine: generator failed on attempt %d: %s", number, exc)
                attempts.append(Attempt(number, feedback, None, None, exc))
                return RefineResult(answer, False, tuple(attempts), exc)
            answer = generated
            try:
                response = self.evaluator.evaluate(
                    EvaluationRequest(user_text=prompt, data_list=documents_of(documents), response_content=answer)
                )
            except Exception as exc:  # the judge failed: keep the answer and what came before
                log.warning("self-refine: evaluator failed on attempt %d: %s", number, exc)
                attempts.append(Attempt(number, feedback, answer, None, exc))
                return RefineResult(answer, False, tuple(attempts), exc)
            attempts.append(Attempt(number, feedback, answer, response))
            if response.passed:
                return RefineResult(answer, True, tuple(attempts))
            feedback = response.feedback
        return RefineResult(answer, False, tuple(attempts))

    __call__ = run
