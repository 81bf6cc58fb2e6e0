"""judgelab: small LLM judges in process, with probabilities.

Public names are imported lazily, so ``import judgelab`` stays cheap and loads
neither llama_cpp nor torch until a model is loaded.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "load_model": "judgelab.engine",
    "JudgeModel": "judgelab.engine",
    "Judgment": "judgelab.engine",
    "Document": "judgelab.evaluators",
    "EvaluationRequest": "judgelab.evaluators",
    "EvaluationResponse": "judgelab.evaluators",
    "Evaluator": "judgelab.evaluators",
    "evaluate_many": "judgelab.evaluators",
    "FactCheckingEvaluator": "judgelab.evaluators",
    "RelevancyEvaluator": "judgelab.evaluators",
    "CriteriaJudge": "judgelab.evaluators",
    "CriteriaEvaluator": "judgelab.evaluators",
    "Outcome": "judgelab.evaluators",
    "Verdict": "judgelab.evaluators",
    "RubricEvaluator": "judgelab.evaluators",
    "SelfRefine": "judgelab.evaluators",
    "Noul": "judgelab.questions",
    "Choice": "judgelab.questions",
    "Score": "judgelab.questions",
    "ModelSpec": "judgelab.specs",
    "load_spec": "judgelab.specs",
    "list_specs": "judgelab.specs",
    "DEFAULT_MODEL_ID": "judgelab.specs",
    "JudgelabError": "judgelab.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'judgelab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
