"""Asking typed questions of a judge model: one prefill per question.

``ask_all`` groups questions by the label words they are read from (every
``Noul`` reads Yes/No; a 5-level ``Score`` reads 0..4) and sends each group
to the engine in one ``judge_many`` call, so questions over the same state
share its prefix in the KV cache; a state asked several label sets gets its
own calls, back to back, so its prefix is still prefilled once. When a group
fails (a prompt too long for the context, labels the model cannot tell
apart), its questions are retried one by one so that only the bad ones fail.

``ask_prompts`` asks a yes/no or scale question over prompts an evaluator
rendered from its own template; it reads labels and the expected level with
the same readers as ``ask_all``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, overload

from judgelab.engine import Judgment
from judgelab.errors import JudgelabError, LabelError, QuestionError
from judgelab.questions._render import check_state, choice_reads_letters, choice_tokens, render_user_turn
from judgelab.questions._types import Answer, Choice, ChoiceAnswer, Noul, NoulAnswer, Question, Score, ScoreAnswer

__all__ = [
    "QuestionModel",
    "PreparedQuestion",
    "PromptAnswer",
    "ask_prompts",
    "expected_level",
    "prepare",
    "ask",
    "ask_all",
]

log = logging.getLogger(__name__)

YES_NO = ("Yes", "No")


class LabelTokenCounts(Protocol):
    """What asking reads of resolved labels (``judgelab.engine.ResolvedLabels``): each label's token count."""

    @property
    def n_tokens(self) -> tuple[int, ...]: ...


class QuestionModel(Protocol):
    """What asking needs of a model (``judgelab.engine.JudgeModel`` has it all)."""

    def render(self, user: str, *, system: str | None = None) -> str: ...

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]: ...

    def resolve_labels(self, labels: Sequence[str]) -> LabelTokenCounts: ...


@dataclass(frozen=True)
class PreparedQuestion:
    """A question turned into a prompt, the label words to read, and a reader."""

    prompt: str
    labels: tuple[str, ...]
    read: Callable[[Mapping[str, float], int], Answer]


def _single_tokens(model: QuestionModel, labels: Sequence[str]) -> bool:
    try:
        resolved = model.resolve_labels(labels)
    except LabelError:
        return False
    return all(n == 1 for n in resolved.n_tokens)


def prepare(
    model: QuestionModel,
    state: Mapping[str, object],
    question: Question,
    *,
    system: str | None = None,
) -> PreparedQuestion:
    """The prompt for ``question`` over ``state`` in the model's prompt format."""
    check_state(state)
    if isinstance(question, Noul):
        prompt = model.render(render_user_turn(state, question), system=system)
        return PreparedQuestion(prompt, YES_NO, _read_noul)
    if isinstance(question, Choice):
        letters = choice_reads_letters(question, question.letters is None and _single_tokens(model, question.labels))
        words = choice_tokens(question, letters)
        prompt = model.render(render_user_turn(state, question, letters=letters), system=system)
        return PreparedQuestion(prompt, words, _choice_reader(question, words))
    if isinstance(question, Score):
        prompt = model.render(render_user_turn(state, question), system=system)
        return PreparedQuestion(prompt, question.labels, _read_score)
    raise QuestionError(
        f"Not a typed question: {type(question).__name__}. Use Noul, Choice or Score."
    )


def _read_noul(probabilities: Mapping[str, float], prompt_tokens: int, yes: str = "Yes") -> NoulAnswer:
    return NoulAnswer(probability=float(probabilities[yes]), prompt_tokens=prompt_tokens)


def _choice_reader(choice: Choice, words: tuple[str, ...]) -> Callable[[Mapping[str, float], int], ChoiceAnswer]:
    def read(probabilities: Mapping[str, float], prompt_tokens: int) -> ChoiceAnswer:
        probs = {label: float(probabilities[w]) for label, w in zip(choice.labels, words)}
        best = max(probs, key=probs.__getitem__)
        return ChoiceAnswer(probs, best, probs[best], prompt_tokens, read_as=words)

    return read


def expected_level(probabilities: Sequence[float], values: Sequence[int] | None = None) -> float:
    """``sum(value_i * p_i)``: the expected level of a distribution over ordered levels.

    ``values`` are the levels' values (``0 .. n-1`` when omitted; a rubric
    scored 1..5 passes ``(1, 2, 3, 4, 5)``).
    """
    if values is None:
        values = range(len(probabilities))
    return float(sum(v * p for v, p in zip(values, probabilities)))


def _read_score(
    probabilities: Mapping[str, float], prompt_tokens: int, values: Sequence[int] | None = None
) -> ScoreAnswer:
    if values is None:
        values = range(len(probabilities))
    probs = tuple(float(probabilities[str(v)]) for v in values)
    level = max(range(len(probs)), key=probs.__getitem__)
    return ScoreAnswer(probs, expected_level(probs, values), level, prompt_tokens)


#: The typed answer a ``PromptAnswer`` holds: ``NoulAnswer`` for a yes/no prompt, ``ScoreAnswer`` for a scale.
AnswerT = TypeVar("AnswerT", NoulAnswer, ScoreAnswer)


@dataclass(frozen=True)
class PromptAnswer(Generic[AnswerT]):
    """The answer to a closed question asked over an already rendered prompt.

    ``answer`` is the typed answer (``NoulAnswer`` or ``ScoreAnswer``);
    ``probabilities`` is the distribution by label word as the engine read
    it; ``label_mass`` is the engine's label mass when it measures it.
    """

    answer: AnswerT
    probabilities: Mapping[str, float]
    label_mass: float | None = None


@overload
def ask_prompts(model: QuestionModel, prompts: Sequence[str], labels: Sequence[str] = ..., *,
                levels: None = None) -> list[PromptAnswer[NoulAnswer]]: ...


@overload
def ask_prompts(model: QuestionModel, prompts: Sequence[str], labels: Sequence[str] = ..., *,
                levels: Sequence[int]) -> list[PromptAnswer[ScoreAnswer]]: ...


def ask_prompts(
    model: QuestionModel,
    prompts: Sequence[str],
    labels: Sequence[str] = YES_NO,
    *,
    levels: Sequence[int] | None = None,
) -> list[PromptAnswer[NoulAnswer]] | list[PromptAnswer[ScoreAnswer]]:
    """Ask one closed question per already rendered prompt, in one engine call.

    For evaluators whose prompts are their own templates (rendered with
    ``model.render``; the engine's ``Prompt`` objects are passed through
    untouched, so control-token safety holds).

    Parameters
    ----------
    model
        The judge model.
    prompts
        Rendered prompts, each up to where the answer starts.
    labels
        Without ``levels``: the yes word and the no word (``("Yes", "No")``);
        the answer is a ``NoulAnswer`` with P(yes word).
    levels
        The values of an ordered scale whose label words are ``str(value)``
        (``labels`` is then ignored); the answer is a ``ScoreAnswer`` whose
        ``expected`` is ``sum(value * p)``.

    Raises
    ------
    QuestionError
        When ``labels`` is not a pair of words for a yes/no question.
    ContextLengthError, LabelError
        From the engine, when a prompt does not fit or the labels cannot be read.
    """
    if levels is not None:
        values = tuple(levels)
        words = tuple(str(v) for v in values)
        judgments = model.judge_many(prompts, words)
        return [
            PromptAnswer(_read_score(j.probabilities, getattr(j, "prompt_tokens", 0), values), j.probabilities,
                         getattr(j, "label_mass", None))
            for j in judgments
        ]
    words = tuple(labels)
    if len(words) != 2:
        raise QuestionError(f"A yes/no question reads two label words (yes, no), got {list(words)}.")
    judgments = model.judge_many(prompts, words)
    return [
        PromptAnswer(_read_noul(j.probabilities, getattr(j, "prompt_tokens", 0), words[0]), j.probabilities,
                     getattr(j, "label_mass", None))
        for j in judgments
    ]


def ask(
    model: QuestionModel,
    state: Mapping[str, object],
    question: Question,
    *,
    system: str | None = None,
) -> Answer:
    """The answer to one question over ``state`` (one prefill).

    Raises
    ------
    QuestionError
        When the state or question is malformed.
    ContextLengthError, LabelError
        From the engine, when the prompt does not fit or the labels cannot be read.
    """
    result = ask_all(model, [(state, question)], system=system, return_exceptions=True)[0]
    if isinstance(result, BaseException):
        raise result
    return result


def ask_all(
    model: QuestionModel,
    items: Sequence[tuple[Mapping[str, object], Question]],
    *,
    system: str | None = None,
    return_exceptions: bool = False,
) -> list[Answer | JudgelabError]:
    """Answers to many ``(state, question)`` pairs, in order.

    Questions that read the same label words go to the engine together,
    except that a state asked questions with different label words has its
    own engine calls, one after the other, so its prefix is prefilled once
    and shared by all its questions (a batch never decodes more tokens than
    the same states asked one ``ask_all`` each). With
    ``return_exceptions=True`` a question that cannot be answered gets its
    ``JudgelabError`` in its place and the others are still answered;
    otherwise the first such error is raised (after every question was tried).
    """
    results: list[Answer | JudgelabError | None] = [None] * len(items)
    by_state: dict[int, list[tuple[int, PreparedQuestion]]] = {}
    for i, (state, question) in enumerate(items):
        try:
            prepared = prepare(model, state, question, system=system)
        except JudgelabError as exc:
            results[i] = exc
            continue
        by_state.setdefault(id(state), []).append((i, prepared))

    for labels, members in _engine_calls(by_state.values()):
        _answer_group(model, labels, members, results)

    if not return_exceptions:
        for r in results:
            if isinstance(r, JudgelabError):
                raise r
    return results  # type: ignore[return-value]


Member = tuple[int, PreparedQuestion]


def _engine_calls(states: Iterable[Sequence[Member]]) -> list[tuple[tuple[str, ...], list[Member]]]:
    """The ``judge_many`` calls for questions grouped per state (each state's list in order).

    States whose questions all read one label set are batched across states,
    one call per label set; a state with several label sets gets one call per
    set, back to back, so the engine's cached prefix of the state is reused.
    """
    shared: dict[tuple[str, ...], list[Member]] = {}
    own: list[tuple[tuple[str, ...], list[Member]]] = []
    for members in states:
        per_labels: dict[tuple[str, ...], list[Member]] = {}
        for member in members:
            per_labels.setdefault(member[1].labels, []).append(member)
        if len(per_labels) == 1:
            (labels, group), = per_labels.items()
            shared.setdefault(labels, []).extend(group)
        else:
            own.extend(per_labels.items())
    return list(shared.items()) + own


def _answer_group(
    model: QuestionModel,
    labels: tuple[str, ...],
    members: list[Member],
    results: list[Answer | JudgelabError | None],
) -> None:
    """Answer one engine call's questions into ``results``; a failed batch is retried one by one."""
    prompts = [p.prompt for _, p in members]
    judgments: Sequence[Judgment | JudgelabError]
    try:
        judgments = model.judge_many(prompts, labels)
    except JudgelabError as exc:
        if len(members) == 1:
            results[members[0][0]] = exc
            return
        log.info("a batch of %d questions failed (%s); asking them one by one", len(members), exc)
        one_by_one: list[Judgment | JudgelabError] = []
        for _, p in members:
            try:
                one_by_one.append(model.judge_many([p.prompt], labels)[0])
            except JudgelabError as one_exc:
                one_by_one.append(one_exc)
        judgments = one_by_one
    for (i, prepared), judgment in zip(members, judgments):
        if isinstance(judgment, JudgelabError):
            results[i] = judgment
        else:
            results[i] = prepared.read(judgment.probabilities, getattr(judgment, "prompt_tokens", 0))
