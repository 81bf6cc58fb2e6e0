"""``FactCheckingEvaluator``: is a claim supported by a document?"""

from __future__ import annotations

from judgelab.engine import JudgeModel
from judgelab.evaluators._spi import EvaluationRequest
from judgelab.evaluators._yesno import ScoreCalibrator, YesNoEvaluator

__all__ = ["FactCheckingEvaluator", "DEFAULT_FACT_CHECK_TEMPLATE", "BESPOKE_FACT_CHECK_TEMPLATE", "MINICHECK_SYSTEM_PROMPT"]

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


class FactCheckingEvaluator(YesNoEvaluator):
    """Is the claim supported by the document? Spring AI's ``FactCheckingEvaluator``.

    Field roles, as in Spring AI (note: the opposite of ``RelevancyEvaluator``,
    where ``user_text`` is the query):

    - ``user_text`` is the **document** (the evidence);
    - ``response_content`` is the **claim** to check;
    - ``data_list``, when not empty, is used as the document instead of
      ``user_text`` (the convention of later Spring AI releases, where the
      retrieved documents are the evidence).

    ``score`` is P(yes) normalised over yes/no from one prefill; ``passed`` is
    ``score >= threshold``. A document longer than the model's chunk size is
    split on sentence boundaries, each chunk is judged, and the score is the
    maximum over chunks (``metadata["chunks"]`` has every chunk's score).

    Parameters
    ----------
    model
        A loaded ``JudgeModel``.
    prompt_template
        Must contain ``{document}`` and ``{claim}``; defaults to Spring AI's text.
    threshold
        Pass when the (calibrated) score reaches it.
    system
        System prompt; defaults to the model spec's.
    calibrator
        A fitted calibrator (``judgelab.calibration.load_calibrator``) applied
        to the raw probability.
    """

    name = "fact-checking"
    evidence_field = "document"
    required_placeholders = ("document", "claim")
    default_template = DEFAULT_FACT_CHECK_TEMPLATE
    pass_word = "supported"
    fail_word = "not supported"

    @classmethod
    def for_bespoke_minicheck(
        cls, model: JudgeModel, threshold: float = 0.5, *, calibrator: ScoreCalibrator | None = None
    ) -> "FactCheckingEvaluator":
        """MiniCheck's prompt: its system prompt and "Document: ...\\nClaim: ...".

        Uses the model spec's ``fact-check`` task format when it has one (as
        ``bespoke-minicheck-7b`` does).
        """
        task = model.spec.tasks.get("fact-check")
        evaluator = cls(
            model,
            task.template if task else BESPOKE_FACT_CHECK_TEMPLATE,
            threshold,
            system=(task.system if task and task.system is not None else MINICHECK_SYSTEM_PROMPT),
            calibrator=calibrator,
        )
        evaluator.name = "bespoke-minicheck"
        return evaluator

    def template_values(self, request: EvaluationRequest) -> dict[str, str]:
        docs = request.documents_text
        document = "\n\n".join(docs) if docs else request.user_text
        return {"document": document, "claim": request.response_content}
