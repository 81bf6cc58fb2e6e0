"""The shared machinery of yes/no template evaluators (fact-checking, relevancy).

A template with named placeholders is filled from the request; the field that
holds long evidence is chunked to fit the context; every chunk is one prefill;
the raw score is P(yes) of the best chunk, and the score is the raw score
passed through a fitted calibrator when one is set; ``passed`` is
``score >= threshold``. Label probabilities are keyed by the label words as
given (the spec's ``"Yes"``/``"No"``), as the engine keys them.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Generic, TypedDict, TypeVar, Unpack, cast, overload

import numpy as np

from judgelab.engine import JudgeModel
from judgelab.errors import ContextLengthError, ParameterError, ParameterTypeError, TemplateError, check_parameter
from judgelab.evaluators._chunking import chunk_text
from judgelab.evaluators._detail import JudgmentDetail
from judgelab.evaluators._identity import EvaluatorIdentity
from judgelab.evaluators._keywords import check_keywords
from judgelab.evaluators._spi import BaseEvaluator, EvaluationRequest, EvaluationResponse
from judgelab.evaluators._template_config import DecisionPolicy, ScoreCalibrator, TemplateConfig
from judgelab.questions import NoulAnswer, PromptAnswer, ask_prompts

__all__ = ["DecisionPolicy", "ScoreCalibrator", "YesNoEvaluator", "YesNoParameters", "check_placeholders", "fill_template"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Tokens kept free besides template and evidence: the BOS and rounding when
# chunk token counts are summed.
_MARGIN_TOKENS = 16


def check_placeholders(template: str, required: Sequence[str], *, evaluator: str) -> None:
    """Raise ``TemplateError`` naming every required placeholder the template lacks."""
    present = set(_PLACEHOLDER.findall(template))
    missing = tuple(name for name in required if name not in present)
    if missing:
        names = ", ".join("{" + m + "}" for m in missing)
        raise TemplateError(
            f"{evaluator} prompt template is missing {names}; it must contain "
            + ", ".join("{" + r + "}" for r in required)
            + ".",
            missing=missing,
        )


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` placeholders; braces in the values are left alone."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


T = TypeVar("T")


class _Setting(Generic[T]):
    """An evaluator attribute read from (and, when set on a copy, replaced in) its ``TemplateConfig``."""

    def __init__(self, field: str) -> None:
        self.field = field

    @overload
    def __get__(self, evaluator: None, owner: type[object]) -> "_Setting[T]": ...

    @overload
    def __get__(self, evaluator: "YesNoEvaluator", owner: type[object]) -> T: ...

    def __get__(self, evaluator: "YesNoEvaluator | None", owner: type[object]) -> "T | _Setting[T]":
        if evaluator is None:
            return self
        value: T = getattr(evaluator.settings, self.field)
        return value

    def __set__(self, evaluator: "YesNoEvaluator", value: T) -> None:
        evaluator.settings = dataclasses.replace(evaluator.settings, **{self.field: value})  # type: ignore[arg-type]


class YesNoParameters(TypedDict, total=False):
    """The keyword parameters of a template evaluator, declared once.

    ``YesNoEvaluator(model, **parameters)`` and ``YesNoEvaluator.config_for(**parameters)`` take them
    (``Unpack[YesNoParameters]``), so mypy refuses a misspelled or mistyped one, and both check them at
    run time against this declaration (``ParameterError`` naming the declared ones). A subclass that
    adds parameters declares a ``TypedDict`` that extends this one (``FactCheckingParameters``).

    Attributes
    ----------
    prompt_template
        The template; default the class's ``default_template``. Must hold its required placeholders.
    threshold
        Pass when the (calibrated) score reaches it; in [0, 1], default 0.5.
    system
        The system prompt; default ``None`` (the model spec's).
    labels
        The (yes, no) label words; default ``("Yes", "No")``.
    calibrator
        A fitted calibrator applied to the raw score; default ``None``.
    policy, abstain_passes
        A calibrated pass/fail/abstain policy that decides instead of the threshold, and whether an
        ABSTAIN passes; default ``None`` and ``False``.
    name
        The evaluator's name; default the class's ``default_name``.
    """

    prompt_template: str | None
    threshold: float
    system: str | None
    labels: tuple[str, str]
    calibrator: ScoreCalibrator | None
    policy: DecisionPolicy | None
    abstain_passes: bool
    name: str | None


_DECLARATIONS: dict[type, type] = {}


def _declaration(cls: "type[YesNoEvaluator]") -> type:
    """The keyword ``TypedDict`` of ``cls``: what its ``config_for`` takes as ``**parameters: Unpack[...]``."""
    if cls in _DECLARATIONS:
        return _DECLARATIONS[cls]
    hint = typing.get_type_hints(cls.config_for).get("parameters")
    args = typing.get_args(hint)
    if typing.get_origin(hint) is not Unpack or not args:
        raise TemplateError(f"{cls.__name__}.config_for must take **parameters: Unpack[a TypedDict of its parameters] "
                            "(as YesNoEvaluator.config_for does).")
    declared: type = args[0]
    _DECLARATIONS[cls] = declared
    return declared


class YesNoEvaluator(BaseEvaluator):
    """Base of evaluators that ask one yes/no question from a template.

    Its parameters are one frozen ``TemplateConfig`` (``settings``), given
    as ``config`` or built from the keyword parameters that ``YesNoParameters``
    declares (a subclass's own ``TypedDict`` when it adds some) by ``config_for``:
    ``cls(model, threshold=0.7)`` is ``cls(model, cls.config_for(threshold=0.7))``,
    and a misspelled or mistyped keyword fails in mypy and at construction. ``name``,
    ``prompt_template``, ``threshold``, ``system``, ``labels``, ``calibrator``,
    ``policy`` and ``abstain_passes`` read that config.

    Subclasses define ``default_name``, ``default_template``,
    ``evidence_field`` (the placeholder that is chunked), the verdict words
    and ``template_values(request)``; ``registered_as`` registers one by name.
    """

    default_name = "yes-no"
    evidence_field = "document"
    required_placeholders: tuple[str, ...] = ()
    pass_word = "yes"
    fail_word = "no"

    default_template = ""

    name = _Setting[str]("name")
    prompt_template = _Setting[str]("template")
    threshold = _Setting[float]("threshold")
    system = _Setting[str | None]("system")
    labels = _Setting[tuple[str, ...]]("labels")
    calibrator = _Setting[ScoreCalibrator | None]("calibrator")
    policy = _Setting[DecisionPolicy | None]("policy")
    abstain_passes = _Setting[bool]("abstain_passes")

    def __init__(self, model: JudgeModel, config: TemplateConfig | None = None, /,
                 **parameters: Unpack[YesNoParameters]) -> None:
        """Judge with ``model``, as ``config`` says or as ``config_for(**parameters)`` says.

        Raises
        ------
        ParameterError
            When a parameter is not declared (the message lists those that are), both a config
            and parameters are given, or the config is another class's.
        ParameterTypeError
            When ``config`` is not a ``TemplateConfig``, or a parameter is not of its declared type.
        PolicyMismatchError
            When the config's policy was calibrated for another model spec or template.
        """
        self._start(model, config, parameters)

    def _start(self, model: JudgeModel, config: TemplateConfig | None, parameters: Mapping[str, object]) -> None:
        if config is None:
            config = self.checked_config(parameters)
        elif not isinstance(config, TemplateConfig):
            raise ParameterTypeError(f"{type(self).__name__}(model, config): config must be a TemplateConfig, got "
                                     f"{type(config).__name__}; pass a template as prompt_template=...")
        elif parameters:
            raise ParameterError(f"{type(self).__name__} takes a TemplateConfig or parameters, not both "
                                 f"(got a config and {', '.join(sorted(parameters))}); "
                                 "use dataclasses.replace(config, ...) to change a config.")
        if config.kind is not type(self):
            raise ParameterError(f"{type(self).__name__} was given the config of {config.kind.__name__}; "
                                 f"build it with {type(self).__name__}.config_for(...).")
        self.model = model
        self.settings = config
        if config.policy is not None:
            self.set_policy(config.policy, abstain_passes=config.abstain_passes)

    @classmethod
    def config_for(cls, **parameters: Unpack[YesNoParameters]) -> TemplateConfig:
        """The ``TemplateConfig`` of ``cls(model, **parameters)``, checked as the constructor checks them.

        Needs no model: what an evaluator asks and how it decides do not
        depend on the model (``policy`` and ``abstain_passes`` are kept and
        change neither identity nor template hash; the policy is checked
        against the model when the evaluator is built). The parameters and
        their defaults are ``YesNoParameters``'.

        Raises
        ------
        ParameterError
            When a parameter is not declared, or ``threshold`` is not in [0, 1].
        ParameterTypeError
            When a parameter is not of its declared type.
        TemplateError
            When ``prompt_template`` lacks a required placeholder.
        """
        return cls.checked_config(parameters)

    @classmethod
    def parameter_declaration(cls) -> type:
        """The ``TypedDict`` that declares this class's keyword parameters (``YesNoParameters`` or an extension)."""
        return _declaration(cls)

    @classmethod
    def checked_config(cls, parameters: Mapping[str, object]) -> TemplateConfig:
        """``config_for`` from a mapping whose names and types are not known to mypy (an evaluator built by name).

        The names and types are checked against ``parameter_declaration()`` first, so this is exactly
        ``config_for(**parameters)``, with the same errors.
        """
        check_keywords(cls.__name__, parameters, _declaration(cls))
        return cls.make_config(cast(YesNoParameters, parameters))

    @classmethod
    def make_config(cls, parameters: YesNoParameters) -> TemplateConfig:
        """Build the config from checked parameters (a subclass that declares more reads them here)."""
        threshold = parameters.get("threshold", 0.5)
        check_parameter(0.0 <= threshold <= 1.0, "threshold", cls.__name__, "a number in [0, 1]", threshold)
        prompt_template = parameters.get("prompt_template") or cls.default_template
        check_placeholders(prompt_template, cls.required_placeholders, evaluator=cls.__name__)
        return TemplateConfig(cls, parameters.get("name") or cls.default_name, prompt_template,
                              parameters.get("system"), tuple(parameters.get("labels", ("Yes", "No"))), threshold,
                              parameters.get("calibrator"), policy=parameters.get("policy"),
                              abstain_passes=parameters.get("abstain_passes", False))

    def config(self) -> TemplateConfig:
        """What this evaluator asks and how it decides, as it is now (a fenced copy's fenced template included)."""
        return self.settings

    @property
    def template_hash(self) -> str:
        """A short hash of what the model is asked: evaluator class, template, system prompt, labels."""
        return self.settings.template_hash

    def set_policy(self, policy: DecisionPolicy, *, abstain_passes: bool = False) -> None:
        """Decide pass/fail/abstain with a calibrated policy instead of ``threshold``.

        ``passed`` is then true only on a PASS decision (and on ABSTAIN when
        ``abstain_passes``). Raises ``PolicyMismatchError`` when the policy
        was calibrated for another model spec or template.
        """
        policy.check(spec_hash=self.model.spec.spec_hash, template_hash=self.template_hash,
                     where=f"{type(self).__name__} on {self.model.id}")
        self.settings = dataclasses.replace(self.settings, policy=policy, abstain_passes=abstain_passes)

    # -- identity ------------------------------------------------------------

    @classmethod
    def default_identity(cls, spec_hash: str | None) -> EvaluatorIdentity:
        """The identity of ``cls(model)`` with default arguments, for a model whose spec has ``spec_hash``.

        Lets a caller check saved records against the evaluator it would build
        without loading the model (``cls.config_for(...).identity`` for other arguments).
        """
        return cls.config_for().identity(spec_hash)

    def identity(self) -> EvaluatorIdentity:
        """The model spec hash and a hash of this evaluator's configuration."""
        return self.settings.identity(self.model.spec.spec_hash)

    # -- subclass hooks ------------------------------------------------------

    def template_values(self, request: EvaluationRequest) -> dict[str, str]:
        raise NotImplementedError

    # -- prompts -------------------------------------------------------------

    def _render(self, values: Mapping[str, str]) -> str:
        return self.model.render(fill_template(self.prompt_template, values), system=self.system)

    def prompts_for(self, request: EvaluationRequest) -> list[str]:
        """One prompt per evidence chunk (one prompt when the evidence fits)."""
        values = self.template_values(request)
        evidence = values.get(self.evidence_field, "")
        skeleton = len(self.model.tokenize(self._render({**values, self.evidence_field: ""})))
        room = self.model.n_ctx - skeleton - _MARGIN_TOKENS
        if room < 16:
            raise ContextLengthError(skeleton, self.model.n_ctx, what=f"{self.name} prompt without its {self.evidence_field}")
        budget = min(room, self.model.spec.effective_chunk_tokens(self.model.n_ctx))
        if len(self.model.tokenize(self._render(values))) <= self.model.n_ctx and (
            self.model.count_tokens(evidence) <= budget
        ):
            return [self._render(values)]
        chunks = chunk_text(evidence, budget, self.model.count_tokens)
        return [self._render({**values, self.evidence_field: c}) for c in chunks]

    # -- evaluation ----------------------------------------------------------

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        requests = list(requests)
        prompts: list[str] = []
        spans: list[tuple[int, int]] = []
        for request in requests:
            ps = self.prompts_for(request)
            spans.append((len(prompts), len(prompts) + len(ps)))
            prompts.extend(ps)
        answers = ask_prompts(self.model, prompts, self.labels)
        return [self._response(answers[a:b]) for a, b in spans]

    def calibrated(self, raw_score: float) -> float:
        """The score a raw score becomes: through the calibrator if one is set (clipped to [0, 1]), else itself."""
        if self.calibrator is None:
            return raw_score
        return float(np.clip(self.calibrator.predict(np.array([raw_score]))[0], 0.0, 1.0))

    def _response(self, answers: Sequence[PromptAnswer[NoulAnswer]], *, best: int | None = None,
                  raw_score: float | None = None,
                  extra: Mapping[str, object] | None = None, where: str | None = None) -> EvaluationResponse:
        """The response to one request from its prompts' answers.

        Names along the way (docs/architecture.md): each answer's
        ``probability`` is P(yes word) of one prompt; the raw score is the
        evaluator's P(pass) before its calibrator (by default the best
        chunk's probability); the score is the raw score after the
        calibrator (equal to it without one). An evaluator that combines its
        prompts otherwise passes the prompt it reports (``best``), the
        combined raw score (``raw_score``), metadata to add (``extra``) and
        the feedback's account of where the score came from (``where``).
        """
        yes, no = self.labels
        chunk_raw_scores = [j.answer.probability for j in answers]
        best = int(np.argmax(chunk_raw_scores)) if best is None else best
        raw_score = float(chunk_raw_scores[best]) if raw_score is None else raw_score
        score = self.calibrated(raw_score)
        policy = self.policy
        decision = policy.decide(score) if policy is not None else None
        if decision is None:
            passed = score >= self.threshold
        else:
            passed = decision == "pass" or (decision == "abstain" and self.abstain_passes)
        verdict = self.pass_word if passed else self.fail_word
        if where is None:
            where = f" (best of {len(answers)} chunks: chunk {best + 1})" if len(answers) > 1 else ""
        calibrated = f", calibrated from {raw_score:.3f}" if self.calibrator is not None else ""
        feedback = (
            f"{verdict.capitalize()}: P({yes.lower()}) = {score:.3f}{calibrated} "
            f"{'>=' if passed else '<'} threshold {self.threshold:.2f}{where}; judge {self.model.id}."
        )
        if policy is not None and decision is not None:
            risk = policy.summary().get("risk", "error")
            feedback = (f"{decision.upper()} (policy: {risk} <= {policy.alpha:g} among decided rows, "
                        f"calibrated on {policy.n} rows): P({yes.lower()}) = {score:.3f}{calibrated}{where}; "
                        f"judge {self.model.id}.")
        detail = JudgmentDetail(
            evaluator=self.name,
            raw_score=raw_score,
            # keyed by the label words as given (the spec's "Yes"/"No"), as the engine keys them
            probabilities={yes: answers[best].probabilities[yes], no: answers[best].probabilities[no]},
            chunks=tuple(chunk_raw_scores),
            model=self.model.id,
            spec_hash=self.model.spec.spec_hash,
            threshold=self.threshold,
            prompt_tokens=sum(j.answer.prompt_tokens for j in answers),
            calibrated=self.calibrator is not None,
        )
        metadata: dict[str, object] = {
            "evaluator": detail.evaluator,
            "model": detail.model,
            "spec_hash": detail.spec_hash,
            "template_hash": self.template_hash,
            "probabilities": dict(detail.probabilities),
            "raw_score": raw_score,
            "chunks": chunk_raw_scores,
            "threshold": self.threshold,
            "prompt_tokens": detail.prompt_tokens,
            "calibrated": detail.calibrated,
        }
        if policy is not None and decision is not None:
            metadata.update(decision=decision, alpha=policy.alpha, n=policy.n, policy=policy.summary())
        if answers[best].label_mass is not None:
            metadata["label_mass"] = answers[best].label_mass
        if extra:
            metadata.update(extra)
        return EvaluationResponse(passed=passed, score=score, feedback=feedback, metadata=metadata, detail=detail)
