"""``FactCheckingEvaluator``: is a claim supported by a document?"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Unpack, cast

from judgelab.engine import JudgeModel
from judgelab.errors import check_parameter
from judgelab.evaluators._decompose import DecompositionPlan, combine_checks, plan_checks
from judgelab.evaluators._registry import EvaluatorName, registered_as
from judgelab.evaluators._spi import EvaluationRequest, EvaluationResponse
from judgelab.evaluators._template_config import TemplateConfig
from judgelab.evaluators._yesno import ScoreCalibrator, YesNoEvaluator, YesNoParameters
from judgelab.questions import ask_prompts
from judgelab.specs import ModelSpec

__all__ = ["FactCheckingEvaluator", "FactCheckingParameters", "DEFAULT_FACT_CHECK_TEMPLATE", "BESPOKE_FACT_CHECK_TEMPLATE", "MINICHECK_SYSTEM_PROMPT"]

# Spring AI's FactCheckingEvaluator default text (its "\\n" escapes written as newlines).
DEFAULT_FACT_CHECK_TEMPLATE = (
    "Evaluate whether or not the following claim is supported by the provided document.\n"
    'Respond with "yes" if the claim is supported, or "no" if it is not.\n'
    "Document:\n{document}\n"
    "Claim:\n{claim}"
)

# MiniCheck's user turn (also what Spring AI's forBespokeMinicheck sends).
BESPOKE_FACT_CHECK_TEMPLATE = "Document: {document}\nClaim: {claim}"

MINICHECK_SYSTEM_PROMPT = (
    "Determine whether the provided claim is consistent with the corresponding document. "
    "Consistency in this context implies that all information presented in the claim is "
    "substantiated by the document. If not, it should be considered inconsistent. Please "
    "assess the claim's consistency with the document by responding with either \"Yes\" or \"No\"."
)


def _check_decomposition(window: int, top_windows: int) -> None:
    check_parameter(isinstance(window, int) and window >= 1, "window", "FactCheckingEvaluator", "an int >= 1", window)
    check_parameter(isinstance(top_windows, int) and top_windows >= 1, "top_windows", "FactCheckingEvaluator",
                    "an int >= 1", top_windows)


class FactCheckingParameters(YesNoParameters, total=False):
    """``FactCheckingEvaluator``'s keyword parameters: ``YesNoParameters``' and the decomposition's.

    Attributes
    ----------
    decompose
        Check the claim sentence by sentence (default ``False``); names the evaluator
        ``fact-checking-sentences`` unless ``name`` says otherwise.
    window, top_windows
        Window length in document sentences, and windows per claim sentence (ints >= 1, default 3 and 3).
    """

    decompose: bool
    window: int
    top_windows: int


def _bespoke_options(spec: ModelSpec | None) -> dict[str, str]:
    """MiniCheck's template and system prompt, named: the spec's ``fact-check`` task format when it has one."""
    task = (getattr(spec, "tasks", None) or {}).get("fact-check")
    return {"prompt_template": task.template if task else BESPOKE_FACT_CHECK_TEMPLATE,
            "system": task.system if task and task.system is not None else MINICHECK_SYSTEM_PROMPT,
            "name": "bespoke-minicheck"}


@registered_as(
    EvaluatorName("fact-checking", task="fact-check", default_for_task=True,
                  description="Is the claim supported by the documents? (Spring AI FactCheckingEvaluator)"),
    EvaluatorName("fact-checking-sentences", task="fact-check", options={"decompose": True},
                  description="Fact-checking sentence by sentence, each against its 3 best windows of 3 document "
                              "sentences."),
    EvaluatorName("bespoke-minicheck", task="fact-check", options=_bespoke_options,
                  description="Fact-checking with MiniCheck's system prompt and 'Document: ...\\nClaim: ...'."),
)
class FactCheckingEvaluator(YesNoEvaluator):
    """Is the claim supported by the document? Spring AI's ``FactCheckingEvaluator``.

    Field roles, as in Spring AI (note: the opposite of ``RelevancyEvaluator``,
    where ``user_text`` is the query):

    - ``user_text`` is the **document** (the evidence);
    - ``response_content`` is the **claim** to check;
    - ``data_list``, when not empty, is used as the document instead of
      ``user_text`` (the convention of later Spring AI releases, where the
      retrieved documents are the evidence).

    The raw score is P(yes) normalised over yes/no from one prefill
    (``metadata["raw_score"]``); ``score`` is the raw score after the
    calibrator, if one is set (else equal to it); ``passed`` is
    ``score >= threshold``. A document longer than the model's chunk size is
    split on sentence boundaries, each chunk is judged, and the raw score is
    the maximum over chunks (``metadata["chunks"]`` has every chunk's raw score).

    Parameters
    ----------
    model
        A loaded ``JudgeModel``.
    config
        A ``TemplateConfig`` from ``config_for``; or, instead, the keyword
        parameters below (declared once, in ``FactCheckingParameters``: a misspelled
        or mistyped one fails in mypy and at construction).
    prompt_template
        Must contain ``{document}`` and ``{claim}``; defaults to Spring AI's text.
    threshold
        Pass when the (calibrated) score reaches it.
    system
        System prompt; defaults to the model spec's.
    calibrator
        A fitted calibrator (``judgelab.calibration.load_calibrator``) applied
        to the raw score.
    decompose
        Check the claim sentence by sentence: each sentence against its
        ``top_windows`` best windows of ``window`` consecutive document
        sentences (by content-word overlap); the raw score is the minimum over
        sentences of the maximum over windows. ``metadata["sentences"]``
        lists every sentence's raw score (its ``score`` key) and closest evidence, and
        ``metadata["unsupported"]`` the sentences whose calibrated score is under the threshold.
    window, top_windows
        Window length in sentences and windows per claim sentence.
    """

    default_name = "fact-checking"
    evidence_field = "document"
    required_placeholders = ("document", "claim")
    default_template = DEFAULT_FACT_CHECK_TEMPLATE
    pass_word = "supported"
    fail_word = "not supported"

    def __init__(self, model: JudgeModel, config: TemplateConfig | None = None, /,
                 **parameters: Unpack[FactCheckingParameters]) -> None:
        self._start(model, config, parameters)

    @classmethod
    def config_for(cls, **parameters: Unpack[FactCheckingParameters]) -> TemplateConfig:
        """The ``TemplateConfig`` of ``cls(model, **parameters)``, without a model (checked alike)."""
        return cls.checked_config(parameters)

    @classmethod
    def make_config(cls, parameters: YesNoParameters) -> TemplateConfig:
        """``YesNoEvaluator``'s config, with ``(window, top_windows)`` when ``decompose``."""
        mine = cast(FactCheckingParameters, parameters)  # checked against FactCheckingParameters by checked_config
        window, top_windows = mine.get("window", 3), mine.get("top_windows", 3)
        _check_decomposition(window, top_windows)
        decompose = mine.get("decompose", False)
        base: YesNoParameters = {k: v for k, v in mine.items()  # type: ignore[assignment]
                                 if k not in ("decompose", "window", "top_windows")}
        if decompose:
            base["name"] = mine.get("name") or "fact-checking-sentences"
        config = super().make_config(base)
        return dataclasses.replace(config, decomposition=(window, top_windows)) if decompose else config

    @classmethod
    def bespoke_config(cls, spec: ModelSpec | None, threshold: float = 0.5, *,
                       calibrator: ScoreCalibrator | None = None) -> TemplateConfig:
        """The ``TemplateConfig`` of ``for_bespoke_minicheck`` on a model with ``spec`` (``None``: no spec), without a model."""
        options = _bespoke_options(spec)
        return cls.config_for(prompt_template=options["prompt_template"], threshold=threshold, name=options["name"],
                              system=options["system"], calibrator=calibrator)

    @classmethod
    def for_bespoke_minicheck(cls, model: JudgeModel, threshold: float = 0.5, *,
                              calibrator: ScoreCalibrator | None = None) -> "FactCheckingEvaluator":
        """MiniCheck's prompt: its system prompt and "Document: ...\\nClaim: ..." (``bespoke-minicheck``).

        Uses the model spec's ``fact-check`` task format when it has one (as
        ``bespoke-minicheck-7b`` does).
        """
        return cls(model, cls.bespoke_config(model.spec, threshold, calibrator=calibrator))

    @property
    def decompose(self) -> bool:
        """Whether the claim is checked sentence by sentence."""
        return self.settings.decomposition is not None

    def _plan(self, request: EvaluationRequest) -> DecompositionPlan:
        values = self.template_values(request)
        window, top_windows = self.settings.decomposition or (1, 1)
        budget = self.model.spec.effective_chunk_tokens(self.model.n_ctx)
        return plan_checks(values["claim"], values["document"], window=window, top=top_windows,
                           max_tokens=budget, count=self.model.count_tokens)

    def prompts_for(self, request: EvaluationRequest) -> list[str]:
        """One prompt per evidence chunk; with ``decompose``, one per (claim sentence, evidence window)."""
        if not self.decompose:
            return super().prompts_for(request)
        return [self._render({"document": c.evidence, "claim": c.sentence}) for c in self._plan(request).checks]

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        if not self.decompose:
            return super().evaluate_many(requests)
        plans = [self._plan(r) for r in requests]
        prompts = [self._render({"document": c.evidence, "claim": c.sentence}) for p in plans for c in p.checks]
        answers = ask_prompts(self.model, prompts, self.labels)
        out, start = [], 0
        for plan in plans:
            mine = answers[start:start + len(plan.checks)]
            start += len(plan.checks)
            raw_score, best, findings = combine_checks(plan, [a.answer.probability for a in mine])
            weakest = plan.checks[best].sentence_index  # the sentence whose best window is reported
            # the threshold is on the calibrated scale; a finding's score is the sentence's raw score
            unsupported = [f["sentence"] for f in findings if self.calibrated(f["score"]) < self.threshold]
            where = (f" (weakest of {len(findings)} claim sentences: sentence {weakest + 1}, "
                     f"{findings[weakest]['sentence'][:60]!r})") if len(findings) > 1 else ""
            out.append(self._response(mine, best=best, raw_score=raw_score, where=where,
                                      extra={"sentences": findings, "unsupported": unsupported}))
        return out

    def template_values(self, request: EvaluationRequest) -> dict[str, str]:
        docs = request.documents_text
        document = "\n\n".join(docs) if docs else request.user_text
        return {"document": document, "claim": request.response_content}
