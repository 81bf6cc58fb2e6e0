"""``RubricEvaluator``: Flow-Judge style rubric scoring, read as a distribution.

The prompt has Flow-Judge's layout: ``# GOAL``, ``# INPUT`` (the inputs in
``<inputs>``, one tag each), ``# OUTPUT``, the criteria and the rubric
("- Score n: ..." in ascending order), and asks for
``<feedback>...</feedback><score>n</score>``. The score is never parsed from
text: the distribution over the rubric's score digits is read right after
``<score>``.

Two modes:

- ``fast``: the answer is started with ``<score>`` and the digits'
  distribution is read at once; no feedback is written.
- ``explained``: the model writes its feedback greedily after
  ``<feedback>`` (at most ``max_feedback_tokens``), then the distribution is
  read after ``</feedback>\\n<score>``.

``score`` is the expected rubric value normalised to [0, 1];
``passed`` is ``expected value >= minimum`` (on the rubric's scale).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from judgelab.engine import JudgeModel
from judgelab.errors import ContextLengthError, QuestionError
from judgelab.evaluators._detail import JudgmentDetail
from judgelab.evaluators._rubric_presets import RUBRIC_PRESETS, Rubric, RubricItem, rubric_items
from judgelab.evaluators._spi import BaseEvaluator, EvaluationRequest, EvaluationResponse
from judgelab.evaluators._yesno import fill_template
from judgelab.questions import PromptAnswer, ScoreAnswer, ask_prompts

__all__ = ["RubricEvaluator", "RUBRIC_TEMPLATE", "RUBRIC_TEMPLATE_NO_INPUTS"]

_HEAD = (
    "# GOAL\n"
    "You are evaluating the output of an AI system built on a large language model.\n\n"
    "You are given {given}, together with evaluation criteria and a scoring rubric. "
    "Judge the output against the criteria and the rubric.\n\n"
)
_INPUT = "# INPUT\nThe inputs of the task:\n<inputs>\n{inputs}\n</inputs>\n\n"
_TAIL = (
    "# OUTPUT\nThe output of the task:\n<output>\n{output}\n</output>\n\n"
    "# EVALUATION CRITERIA AND SCORING RUBRIC\n"
    "The criteria and the rubric to apply:\n"
    "<evaluation_criteria>\n{criteria}\n</evaluation_criteria>\n\n"
    "<scoring_rubric>\n{rubric}\n</scoring_rubric>\n\n"
    "# INSTRUCTIONS FOR THE EVALUATION\n"
    "1. Read the criteria and what each score in the rubric stands for.\n"
    "2. Read the {read}.\n"
    "3. Decide which score description the output matches best; small details can separate "
    "neighbouring scores.\n"
    "4. Write feedback that justifies the score, pointing at specific parts of the output and "
    "at the rubric.\n"
    "5. Give the final score from the rubric.\n\n"
    "## FORMAT FOR THE EVALUATION\n"
    "- Write the feedback inside <feedback> tags, with no text around it.\n"
    "- Write the numeric score inside <score> tags, with no text around it, after the feedback."
)

RUBRIC_TEMPLATE = (
    _HEAD.replace("{given}", "the inputs and the output of a task") + _INPUT + _TAIL.replace("{read}", "inputs and the output")
)
"""The prompt when the request has inputs (placeholders ``{inputs}``, ``{output}``, ``{criteria}``, ``{rubric}``)."""

RUBRIC_TEMPLATE_NO_INPUTS = _HEAD.replace("{given}", "the output of a task") + _TAIL.replace("{read}", "output")
"""The prompt when the request has no inputs (no ``{inputs}``)."""

Mode = Literal["fast", "explained"]


def _tagged(name: str, value: str) -> str:
    tag = name.strip().lower().replace(" ", "_")
    return f"<{tag}>\n{value}\n</{tag}>"


@dataclass(frozen=True)
class RubricInputs:
    """The input tags a rubric prompt shows the request's parts under.

    ``documents_as``: the documents (``context``; ``reference_answer`` for
    correctness rubrics); ``query_as``: ``user_text``; ``output_as``:
    ``response_content``.
    """

    documents_as: str = "context"
    query_as: str = "query"
    output_as: str = "response"


class RubricEvaluator(BaseEvaluator):
    """Score a response against a rubric, Flow-Judge style.

    Parameters
    ----------
    model
        A loaded ``JudgeModel`` (Flow-Judge-v0.1 is the model this prompt is for).
    criteria
        The evaluation criteria (a question about the output).
    rubric
        ``[(score, description), ...]`` or ``RubricItem`` values; scores are
        distinct digits 0-9.
    minimum
        Pass when the expected score reaches it (on the rubric's scale).
    mode
        ``"fast"`` (distribution only) or ``"explained"`` (feedback first).
    max_feedback_tokens
        Most tokens of feedback in explained mode.
    system
        System prompt; defaults to the model spec's.
    name
        The rubric's name in ``metadata["rubric"]`` (presets pass theirs).
    input_tags
        ``documents_as``, ``query_as``, ``output_as`` (see ``RubricInputs``):
        the input tags the request's parts go under.

    Field roles: ``user_text`` is the query, ``data_list`` the context (or
    reference answer), ``response_content`` the output being scored. Blank
    inputs are left out; with none, the prompt has no ``# INPUT`` section.
    """

    name = "rubric"

    def __init__(
        self,
        model: JudgeModel,
        criteria: str,
        rubric: Sequence[RubricItem | tuple[int, str]],
        minimum: float,
        *,
        mode: Mode = "fast",
        max_feedback_tokens: int = 256,
        system: str | None = None,
        name: str | None = None,
        **input_tags: str,
    ) -> None:
        if not isinstance(criteria, str) or not criteria.strip():
            raise QuestionError("RubricEvaluator needs the evaluation criteria (a non-blank string).")
        tags = RubricInputs(**input_tags)
        self.rubric = Rubric(name or "custom", criteria.strip(), rubric_items(rubric), tags.documents_as)
        if not self.rubric.low <= float(minimum) <= self.rubric.high:
            raise QuestionError(
                f"minimum must be on the rubric's scale [{self.rubric.low}, {self.rubric.high}], "
                f"got {minimum}."
            )
        if mode not in ("fast", "explained"):
            raise QuestionError(f"mode must be 'fast' or 'explained', got {mode!r}.")
        if max_feedback_tokens < 1:
            raise QuestionError(f"max_feedback_tokens must be >= 1, got {max_feedback_tokens}.")
        self.model = model
        self.minimum = float(minimum)
        self.mode: Mode = mode
        self.max_feedback_tokens = int(max_feedback_tokens)
        self.query_as = tags.query_as
        self.output_as = tags.output_as
        self.system = system
        self.levels = tuple(i.score for i in self.rubric.items)
        self.labels = tuple(str(s) for s in self.levels)

    @classmethod
    def preset(
        cls,
        model: JudgeModel,
        name: str,
        *,
        minimum: float | None = None,
        mode: Mode = "fast",
        **kwargs: Any,
    ) -> "RubricEvaluator":
        """One of Flow-Judge's metrics: ``{correctness,faithfulness,relevance}-{binary,3point,5point}``.

        ``minimum`` defaults to the middle of the scale (0.5, 2.0 or 3.0).
        """
        rubric = RUBRIC_PRESETS.get(name)
        if rubric is None:
            raise QuestionError(
                f"No rubric preset named {name!r}. Presets: {', '.join(sorted(RUBRIC_PRESETS))}."
            )
        if minimum is None:
            minimum = (rubric.low + rubric.high) / 2
        return cls(
            model,
            rubric.criteria,
            rubric.items,
            minimum,
            mode=mode,
            documents_as=kwargs.pop("documents_as", rubric.documents_as),
            name=kwargs.pop("name", name),
            **kwargs,
        )

    # -- prompts -------------------------------------------------------------

    def user_prompt(self, request: EvaluationRequest) -> str:
        """The rubric prompt's user turn for ``request``."""
        inputs = []
        if request.user_text.strip():
            inputs.append(_tagged(self.query_as, request.user_text.strip()))
        docs = request.documents_text
        if docs:
            inputs.append(_tagged(self.rubric.documents_as, "\n\n".join(d.strip() for d in docs)))
        values = {
            "inputs": "\n".join(inputs),
            "output": _tagged(self.output_as, request.response_content.strip()),
            "criteria": self.rubric.criteria,
            "rubric": "\n".join(f"- Score {i.score}: {i.description}" for i in self.rubric.items),
        }
        return fill_template(RUBRIC_TEMPLATE if inputs else RUBRIC_TEMPLATE_NO_INPUTS, values)

    def prompt(self, request: EvaluationRequest) -> str:
        """The whole prompt, up to where the model's answer starts."""
        return self.model.render(self.user_prompt(request), system=self.system)

    def _feedback(self, base: str) -> str:
        start = base + "<feedback>"
        used = len(self.model.tokenize(start))
        room = min(self.max_feedback_tokens, self.model.n_ctx - used - 16)
        if room < 1:
            raise ContextLengthError(used + 16, self.model.n_ctx, what="rubric prompt with room for feedback")
        return self.model.complete(start, max_tokens=room, stop=("</feedback>", "<score>"))

    # -- evaluation ----------------------------------------------------------

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        requests = list(requests)
        bases = [self.prompt(r) for r in requests]
        if self.mode == "explained":
            feedbacks: list[str | None] = [self._feedback(b) for b in bases]
            # ``+`` keeps the rendered prompt's plain parts plain (an f-string would not)
            prompts = [b + "<feedback>" + (fb or "") + "</feedback>\n<score>" for b, fb in zip(bases, feedbacks)]
        else:
            feedbacks = [None] * len(bases)
            prompts = [b + "<score>" for b in bases]
        answers = ask_prompts(self.model, prompts, levels=self.levels)
        return [self._response(a, fb) for a, fb in zip(answers, feedbacks)]

    def _response(self, reading: PromptAnswer[ScoreAnswer], model_feedback: str | None) -> EvaluationResponse:
        answer = reading.answer
        probs = dict(zip(self.levels, answer.probabilities))
        expected = answer.expected
        low, high = self.rubric.low, self.rubric.high
        # the rubric has no calibrator: its raw score (the expected level scaled to [0, 1]) is its score
        raw_score = min(1.0, max(0.0, (expected - low) / (high - low)))
        passed = expected >= self.minimum
        distribution = (
            "Score distribution: "
            + ", ".join(f"{s}: {p:.2f}" for s, p in probs.items())
            + f"; expected {expected:.2f} {'>=' if passed else '<'} minimum {self.minimum:.2f}"
            + f" ({'passed' if passed else 'failed'}); judge {self.model.id}."
        )
        text = (model_feedback or "").strip()
        feedback = text if text else distribution
        probabilities = dict(zip(self.labels, answer.probabilities))  # keyed by the label words ("1".."5")
        threshold = (self.minimum - low) / (high - low)
        metadata = {
            "evaluator": self.name,
            "rubric": self.rubric.name,
            "mode": self.mode,
            "model": self.model.id,
            "spec_hash": self.model.spec.spec_hash,
            "probabilities": probabilities,
            "expected": expected,
            "raw_score": raw_score,
            "minimum": self.minimum,
            "threshold": threshold,
            "distribution": distribution,
            "model_feedback": model_feedback,
            "prompt_tokens": answer.prompt_tokens,
        }
        detail = JudgmentDetail(
            evaluator=self.name, raw_score=raw_score, probabilities=probabilities, chunks=(raw_score,),
            model=self.model.id, spec_hash=self.model.spec.spec_hash, threshold=threshold,
            prompt_tokens=answer.prompt_tokens,
        )
        return EvaluationResponse(passed=passed, score=raw_score, feedback=feedback, metadata=metadata, detail=detail)
