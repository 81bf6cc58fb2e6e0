"""Spring AI's evaluation SPI and judgelab's evaluators."""

from judgelab.evaluators._spi import (
    BaseEvaluator,
    Document,
    EvaluationRequest,
    EvaluationResponse,
    Evaluator,
    evaluate_many,
)
from judgelab.evaluators._yesno import Calibrator, YesNoEvaluator
from judgelab.evaluators.fact_checking import (
    BESPOKE_FACT_CHECK_TEMPLATE,
    DEFAULT_FACT_CHECK_TEMPLATE,
    MINICHECK_SYSTEM_PROMPT,
    FactCheckingEvaluator,
)
from judgelab.evaluators.relevancy import DEFAULT_RELEVANCY_TEMPLATE, RelevancyEvaluator

__all__ = [
    "BESPOKE_FACT_CHECK_TEMPLATE",
    "BaseEvaluator",
    "Calibrator",
    "DEFAULT_FACT_CHECK_TEMPLATE",
    "DEFAULT_RELEVANCY_TEMPLATE",
    "Document",
    "EvaluationRequest",
    "EvaluationResponse",
    "Evaluator",
    "FactCheckingEvaluator",
    "MINICHECK_SYSTEM_PROMPT",
    "RelevancyEvaluator",
    "YesNoEvaluator",
    "evaluate_many",
]
