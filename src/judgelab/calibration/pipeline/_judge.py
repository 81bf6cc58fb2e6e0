"""Who scores a task in ``calibrate``, known before the model loads: its evaluator's identity.

The judge itself is a ``LazyModel`` (``judgelab.calibration.scoring``, the one
lazy loader); a task's default evaluator is not built to read its identity:
the registry reads it from the evaluator's name and the model spec
(``judgelab.evaluators.evaluator_config``).
"""

from __future__ import annotations

from collections.abc import Mapping

from judgelab.calibration.scoring import LazyModel
from judgelab.evaluators import Evaluator, EvaluatorIdentity, evaluator_config, evaluator_identity, evaluator_tasks

__all__ = ["task_identity"]


def task_identity(task: str, judge: LazyModel, evaluators: Mapping[str, Evaluator]) -> EvaluatorIdentity | None:
    """Who would score ``task`` now, known without loading the model (``None`` when unknown)."""
    if task in evaluators:
        return evaluator_identity(evaluators[task])
    if task not in evaluator_tasks():
        return None
    config = evaluator_config(None, judge.spec_before_loading, task=task)
    return None if config is None else config.identity(judge.spec_hash_before_loading)
