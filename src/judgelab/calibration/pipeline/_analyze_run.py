"""``analyze_run``: saved scores to analyses and policies, then metrics.json and the report (no model)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgelab.calibration._options import options_or_default
from judgelab.calibration.analysis import Analysis, analyze
from judgelab.calibration.data import ScoreRecord, read_scores
from judgelab.calibration.pipeline._deployment import deployment_for
from judgelab.calibration.pipeline._options import CalibrationOptions
from judgelab.calibration.report import Deployment, write_report

__all__ = ["RunAnalysis", "analyze_records", "analyze_run"]


@dataclass(frozen=True)
class RunAnalysis:
    """Each task's analysis and, when policies were fitted, its Deployment (policy saved, curve, commands)."""

    analyses: dict[str, Analysis]
    deployments: dict[str, Deployment] | None


def analyze_records(
    records: Sequence[ScoreRecord],
    out: str | Path,
    *,
    meta: Mapping[str, object] | None = None,
    notes: Mapping[str, Sequence[str]] | None = None,
    policy_delta: float | None = 0.1,
    options: CalibrationOptions | None = None,
) -> RunAnalysis:
    """Analyse each task's records and fit and save its policy (``policy.json``); nothing else is written.

    The parameters are ``analyze_run``'s.
    """
    o = options_or_default(CalibrationOptions, options, "analyze_run")
    by_task: dict[str, list[ScoreRecord]] = {}
    for r in records:
        by_task.setdefault(r.task, []).append(r)
    analyses = {
        task: analyze(recs, strategy=o.threshold_strategy, calibrator=o.calibrator,
                      self_generators=tuple(o.self_generators or ()), k_folds=o.k_folds, target_error=o.target_error,
                      n_resamples=o.n_resamples, seed=o.seed).with_warnings((notes or {}).get(task, ()))
        for task, recs in by_task.items()
    }
    if policy_delta is None:
        return RunAnalysis(analyses, None)
    set_name = (meta or {}).get("set")
    deployments = {
        task: deployment_for(recs, out, alpha=o.target_error, delta=policy_delta, seed=o.seed,
                             set_name=set_name if isinstance(set_name, str) else None, single_task=len(by_task) == 1)
        for task, recs in by_task.items()
    }
    return RunAnalysis(analyses, deployments)


def analyze_run(
    records: Sequence[ScoreRecord] | str | Path,
    out: str | Path,
    *,
    meta: Mapping[str, object] | None = None,
    notes: Mapping[str, Sequence[str]] | None = None,
    policy_delta: float | None = 0.1,
    options: CalibrationOptions | None = None,
) -> dict[str, Analysis]:
    """Analyse saved scores (no model needed) and write metrics.json and the reports to ``out``.

    ``options`` (a ``CalibrationOptions``; its ``threshold_strategy``,
    ``calibrator``, ``self_generators``, ``target_error``, ``k_folds``,
    ``n_resamples``, ``seed`` and ``figures`` are read) say how. ``notes`` are ``{task: [warning, ...]}`` about the data, stated
    in the report.

    With ``policy_delta`` set (the default 0.1), each task also gets a
    pass/fail/abstain policy at ``alpha = target_error`` (``policy.json``, or
    ``policy-TASK.json`` for several tasks) and a Deployment report section;
    the policies are fitted before metrics.json is written, once.
    """
    o = options_or_default(CalibrationOptions, options, "analyze_run")
    if isinstance(records, (str, Path)):
        records = read_scores(records)
    run = analyze_records(records, out, meta=meta, notes=notes, policy_delta=policy_delta, options=o)
    write_report(run.analyses, out, meta=meta, figures=o.figures, deployments=run.deployments)
    return run.analyses
