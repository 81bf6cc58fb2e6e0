"""Scoring runs: labelled rows -> ``scores.jsonl`` (resumable), on this process or a Ray cluster.

Imports only ``data``.
"""

from judgelab.calibration.scoring._executor import (
    BLOCK_KEYS,
    Block,
    BlockReport,
    ExecutionReport,
    Executor,
    LocalExecutor,
    ReplicaReport,
    block_key,
    plan_blocks,
    score_rows,
    tokens_decoded,
)
from judgelab.calibration.scoring._factory import EvaluatorFactory, EvaluatorSource, default_evaluator_for, is_factory
from judgelab.calibration.scoring._ray_executor import INSTALL_HINT, RayExecutor
from judgelab.calibration.scoring._resume import ResumePlan, plan_resume
from judgelab.calibration.scoring._run import run
from judgelab.engine import LazyModel, spec_is_final  # the engine's since issue 39; re-exported where it was

__all__ = [
    "BLOCK_KEYS",
    "Block",
    "BlockReport",
    "EvaluatorFactory",
    "EvaluatorSource",
    "ExecutionReport",
    "Executor",
    "INSTALL_HINT",
    "LazyModel",
    "LocalExecutor",
    "RayExecutor",
    "ReplicaReport",
    "ResumePlan",
    "block_key",
    "default_evaluator_for",
    "is_factory",
    "plan_blocks",
    "plan_resume",
    "run",
    "score_rows",
    "spec_is_final",
    "tokens_decoded",
]
