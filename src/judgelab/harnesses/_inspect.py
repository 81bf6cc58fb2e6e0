"""An Inspect AI scorer backed by a judgelab ``Evaluator`` (docs/harnesses.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING

from judgelab.errors import BackendUnavailableError, DataError
from judgelab.evaluators import Document, EvaluationRequest, EvaluationResponse, Evaluator

if TYPE_CHECKING:
    from inspect_ai.scorer import Score, Scorer, Target
    from inspect_ai.solver import Generate, Solver, TaskState

__all__ = ["fact_check_request", "inspect_scorer", "recorded_answer"]


def fact_check_request(state: TaskState, target: Target) -> EvaluationRequest:
    """The request for Inspect's ``model_graded_fact`` case: is the output supported by the target?

    The target (the expert answer) is the evidence, the model's output the
    claim, and the sample's input the user text.
    """
    return EvaluationRequest(user_text=state.input_text, data_list=[Document(target.text)],
                             response_content=state.output.completion)


def _import_inspect() -> tuple[ModuleType, ModuleType]:
    try:
        import anyio
        from inspect_ai import scorer as inspect_scorers
    except ImportError as exc:
        raise BackendUnavailableError(
            "judgelab's Inspect scorer needs Inspect AI: pip install inspect-ai", backend="inspect_ai"
        ) from exc
    return anyio, inspect_scorers


def recorded_answer(field: str = "submission", *, model: str = "recorded") -> Solver:
    """An Inspect AI solver that takes each sample's answer from ``metadata[field]`` instead of a model.

    For grading answers that were produced elsewhere (logs, a previous run, a
    labelled set) with a judgelab scorer: no model is called.

    Raises
    ------
    BackendUnavailableError
        When Inspect AI is not installed.
    DataError
        (when the task runs) a sample without ``metadata[field]``; the message names the sample.
    """
    try:
        from inspect_ai.model import ModelOutput
        from inspect_ai.solver import solver
    except ImportError as exc:
        raise BackendUnavailableError(
            "judgelab's recorded_answer solver needs Inspect AI: pip install inspect-ai", backend="inspect_ai"
        ) from exc

    @solver(name="recorded_answer")
    def recorded() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if field not in (state.metadata or {}):
                raise DataError(f"Sample {state.sample_id!r} has no metadata[{field!r}] to grade; "
                                f"add the recorded answer there or pass recorded_answer(field=...).")
            state.output = ModelOutput.from_content(model=model, content=str(state.metadata[field]))
            return state

        return solve

    return recorded()


def _metadata(response: EvaluationResponse) -> dict[str, object]:
    return {"passed": response.passed, "feedback": response.feedback, **dict(response.metadata)}


def inspect_scorer(
    evaluator: Evaluator,
    *,
    to_request: Callable[[TaskState, Target], EvaluationRequest] = fact_check_request,
    name: str = "judgelab",
) -> Scorer:
    """An Inspect AI ``Scorer`` whose value is ``evaluator``'s score (P(yes)), with its metadata.

    Parameters
    ----------
    evaluator
        Any judgelab ``Evaluator`` (``FactCheckingEvaluator(model)``,
        ``RelevancyEvaluator(model)``, a ``Cascade``...).
    to_request
        Builds the ``EvaluationRequest`` from Inspect's ``TaskState`` and
        ``Target``; by default the target is the evidence and the output the claim.
    name
        The scorer's name in Inspect's logs and metrics.

    Returns
    -------
    Scorer
        Scores whose ``value`` is the probability, ``answer`` the output,
        ``explanation`` the evaluator's feedback and ``metadata`` its verdict
        (``passed``), threshold and label probabilities. Metrics: mean and
        standard error of the probability.

    Raises
    ------
    BackendUnavailableError
        When Inspect AI is not installed.
    """
    anyio, inspect_scorers = _import_inspect()

    @inspect_scorers.scorer(metrics=[inspect_scorers.mean(), inspect_scorers.stderr()], name=name)
    def judgelab_scorer() -> Callable[[TaskState, Target], Awaitable[Score]]:
        async def score(state: TaskState, target: Target) -> Score:
            request = to_request(state, target)
            response = await anyio.to_thread.run_sync(evaluator.evaluate, request)
            result: Score = inspect_scorers.Score(value=float(response.score), answer=state.output.completion,
                                                  explanation=response.feedback, metadata=_metadata(response))
            return result

        return score

    made: Scorer = judgelab_scorer()
    return made
