"""OpenAI's Decisions questions to typed questions and back (``/v1/decisions`` and MCP's ``decide``).

A wire question is a ``DecisionQuestion`` (``_decision_models``: declared
once, validated by each transport); here it is checked, translated and
answered the same way for both:

- ``predicate`` -> ``Noul(instructions)``; its answer's ``probability`` is P(yes);
- ``choice`` -> ``Choice(instructions, {label: description})``; a boolean
  value is shown as ``true`` / ``false`` and answered with the boolean;
- ``score`` -> ``Score(instructions, ["label: description", ...])``; its
  ``score`` is the expected level index ``sum(i * p_i)``.

All questions go to ``ask_all`` at once, so questions over the one input share
its prefill. A question whose label words the model cannot read gets the API's
per-question ``refusal``; an input longer than the context raises
``ContextLengthError``.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgelab import questions as q
from judgelab.errors import ContextLengthError, JudgelabError
from judgelab.wire._conversation import content_text, one_turn
from judgelab.wire._decision_models import MAX_CHOICES, DecisionChoiceQuestion, DecisionPredicate, DecisionQuestion, DecisionScoreQuestion
from judgelab.wire._errors import WireError

__all__ = [
    "MAX_QUESTIONS", "STATE_FIELD", "ask_decisions", "check_decision_questions", "decision_answer",
    "decision_question", "decision_state",
]

MAX_QUESTIONS = 400
"""The API's limit on questions per request ("Ask 1-400 questions")."""

STATE_FIELD = "input"
"""The state field that holds the request's input."""


def _choice_label(value: str | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else value


def decision_state(value: str | Sequence[tuple[str, str]], *, param: str = "input") -> tuple[dict[str, str], str | None]:
    """The state ``{"input": text}`` and the system prompt (or ``None``) for a string or ``(role, text)`` turns."""
    if isinstance(value, str):
        return {STATE_FIELD: value}, None
    text, system = one_turn(value, param=param)
    return {STATE_FIELD: text}, system


def _check_choices(question: DecisionChoiceQuestion, i: int) -> None:
    choices = question.choices
    n = len(choices)
    if n > MAX_CHOICES:
        raise WireError(f"questions.{i} has {n} choices; a judgelab judge reads at most {MAX_CHOICES} "
                        "(one letter each, A-Z). Split the question.", code="too_many_choices",
                        param=f"questions.{i}.choices")
    labels: dict[str, int] = {}
    for j, option in enumerate(choices):
        key = _choice_label(option.value).strip().lower()
        if key in labels:
            raise WireError(f"questions.{i}.choices.{j} ({option.value!r}) repeats choices.{labels[key]} "
                            "(choices must differ once case and the text of booleans are ignored).",
                            code="duplicate_choice", param=f"questions.{i}.choices.{j}.value")
        labels[key] = j


def check_decision_questions(questions: Sequence[DecisionQuestion]) -> None:
    """Refuse what the API refuses: no questions, over 400, repeated names or choices, bad level counts.

    Raises
    ------
    WireError
        Naming the question (``questions.i...``) and what to do.
    """
    if not questions:
        raise WireError("questions is empty; ask 1 to 400 questions.", param="questions")
    if len(questions) > MAX_QUESTIONS:
        raise WireError(f"{len(questions)} questions; the API allows at most {MAX_QUESTIONS} per request.",
                        code="too_many_questions", param="questions")
    seen: dict[str, int] = {}
    for i, question in enumerate(questions):
        if question.name is None:
            continue
        if question.name in seen:
            raise WireError(f"questions.{i}.name {question.name!r} is also the name of questions.{seen[question.name]}; "
                            "question names must be unique.", code="duplicate_question_name",
                            param=f"questions.{i}.name")
        seen[question.name] = i
    for i, question in enumerate(questions):
        if isinstance(question, DecisionChoiceQuestion):
            _check_choices(question, i)
        elif isinstance(question, DecisionScoreQuestion):
            n = len(question.levels)
            if not 2 <= n <= q.MAX_LEVELS:
                raise WireError(f"questions.{i} has {n} levels; a score needs 2 to {q.MAX_LEVELS}.",
                                code="invalid_levels", param=f"questions.{i}.levels")


def decision_question(question: DecisionQuestion, *, param: str) -> q.Question:
    """The ``judgelab.questions`` question for one wire question (``param``: its path, for errors)."""
    instructions = content_text(question.instructions, param=f"{param}.instructions")
    if not instructions.strip():
        raise WireError(f"{param}.instructions is empty; say what the judge should decide.",
                        code="invalid_request", param=f"{param}.instructions")
    if isinstance(question, DecisionPredicate):
        return q.Noul(instructions=instructions)
    if isinstance(question, DecisionChoiceQuestion):
        options = {_choice_label(c.value): c.description or "" for c in question.choices}
        return q.Choice(instructions=instructions, options=options)
    levels = [f"{lv.label}: {lv.description}" if lv.description else lv.label for lv in question.levels]
    return q.Score(instructions=instructions, levels=levels)


def decision_answer(question: DecisionQuestion, answer: q.Answer) -> dict[str, object]:
    """One answer in the ``openai.types.Decision`` shape."""
    if isinstance(answer, q.NoulAnswer):
        return {"type": "predicate", "name": question.name, "probability": answer.probability}
    if isinstance(answer, q.ChoiceAnswer) and isinstance(question, DecisionChoiceQuestion):
        values = {_choice_label(c.value): c.value for c in question.choices}
        return {
            "type": "choice",
            "name": question.name,
            "choice": values[answer.choice],
            "confidence": answer.confidence,
            "probabilities": [{"value": values[label], "probability": p} for label, p in answer.probabilities.items()],
        }
    if not (isinstance(answer, q.ScoreAnswer) and isinstance(question, DecisionScoreQuestion)):
        raise WireError(f"A {type(answer).__name__} does not answer a {question.type} question.",
                        param="questions")
    probs = list(answer.probabilities)
    return {
        "type": "score",
        "name": question.name,
        "score": answer.expected,
        "confidence": max(probs),
        "probabilities": [
            {"value": i, "label": level.label, "probability": p}
            for i, (level, p) in enumerate(zip(question.levels, probs))
        ],
    }


def ask_decisions(
    model: q.QuestionModel, value: str | Sequence[tuple[str, str]], questions: Sequence[DecisionQuestion],
) -> tuple[list[dict[str, object]], int]:
    """Check, translate and ask every question about one input; wire answers in question order and prompt tokens.

    Blocking (the model judges); run it in a worker thread.

    Raises
    ------
    WireError
        For a question or input the API refuses (``check_decision_questions``).
    ContextLengthError
        When the input does not fit the model's context.
    """
    check_decision_questions(questions)
    state, system = decision_state(value)
    typed = []
    for i, question in enumerate(questions):
        try:
            typed.append(decision_question(question, param=f"questions.{i}"))
        except WireError:
            raise
        except JudgelabError as exc:
            raise WireError(str(exc), param=f"questions.{i}", code=type(exc).__name__) from exc
    results = q.ask_all(model, [(state, t) for t in typed], system=system, return_exceptions=True)
    answers: list[dict[str, object]] = []
    tokens = 0
    for question, result in zip(questions, results):
        if isinstance(result, ContextLengthError):
            raise result
        if isinstance(result, JudgelabError):
            answers.append({"type": "refusal", "name": question.name, "reason": str(result)})
            continue
        answers.append(decision_answer(question, result))
        tokens += result.prompt_tokens
    return answers, tokens
