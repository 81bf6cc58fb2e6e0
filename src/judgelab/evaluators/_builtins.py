"""The built-in evaluators, in the order of ``evaluator_names()`` (the CLI's lists, ``evaluator_tasks()``).

One explicit tuple: a template class brings the names ``registered_as`` attached to it, in its
order; an ensemble is its registry entry. ``install_builtins`` registers them here, in this order and
ahead of any other entry, so neither import order nor import sorting moves a built-in, and an
evaluator a user registers from their own module comes after them.
"""

from __future__ import annotations

from judgelab.evaluators._ensembles import CASCADE, JURY
from judgelab.evaluators._registry import RegisteredEvaluator, install_builtins
from judgelab.evaluators._yesno import YesNoEvaluator
from judgelab.evaluators.fact_checking import FactCheckingEvaluator
from judgelab.evaluators.relevancy import RelevancyEvaluator

__all__ = ["BUILTIN_EVALUATORS"]

BUILTIN_EVALUATORS: tuple[type[YesNoEvaluator] | RegisteredEvaluator, ...] = (
    FactCheckingEvaluator,  # fact-checking, fact-checking-sentences, bespoke-minicheck
    RelevancyEvaluator,  # relevancy
    CASCADE,  # cascade
    JURY,  # jury
)

install_builtins(BUILTIN_EVALUATORS)
