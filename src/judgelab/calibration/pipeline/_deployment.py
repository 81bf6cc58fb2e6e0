"""Each task's pass/fail/abstain policy, fitted and saved before the report is written (its Deployment section)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.policy import LTTSettings, Risk, fit_and_save_policy, risk_coverage_curve
from judgelab.calibration.report import Deployment

__all__ = ["deployment_for"]


def _commands(run_dir: Path, task: str, alpha: float, delta: float) -> tuple[tuple[str, str], ...]:
    run = shlex.quote(str(run_dir))
    return (
        ("refit the policy", f"judgelab policy {run} --task {task} --alpha {alpha:g} --delta {delta:g}"),
        ("serve with it", f"judgelab serve --policy {shlex.quote(str(run_dir / 'policy.json'))}"),
        ("gate CI on a new labelled set", f"judgelab gate {run} --task {task} --set new.jsonl --metric balanced_accuracy --max-drop auto"),
        ("estimate the good-answer share of traffic",
         f"judgelab estimate --run {run} --task {task} --labelled small.jsonl --unlabelled traffic.jsonl"),
    )


def deployment_for(records: Sequence[ScoreRecord], out_dir: str | Path, *, alpha: float = 0.1, delta: float = 0.1,
                   risk: Risk = "error", seed: int | None = 0, set_name: str | None = None,
                   single_task: bool = True) -> Deployment:
    """Fit and save one task's policy (``policy.json``, or ``policy-TASK.json`` beside others) for the report."""
    out = Path(out_dir)
    task = records[0].task if records else ""
    name = "policy.json" if single_task else f"policy-{task}.json"
    settings = LTTSettings(alpha=alpha, delta=delta, risk=risk, seed=seed)
    policy = fit_and_save_policy(records, out / name, settings, set_name=set_name)
    return Deployment(policy.task, policy, name, risk_coverage_curve(records, risk=risk),
                      _commands(out, policy.task, alpha, delta))
