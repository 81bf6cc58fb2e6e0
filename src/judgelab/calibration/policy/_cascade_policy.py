"""``cascade.json``: a fitted cascade of judges, and fitting one from calibration runs of the same rows.

``fit_cascade([run_1_records, run_2_records, ...])`` checks that every stage
scored the same rows of the same set for the same task, prices each stage
(its mean prompt tokens per row, or the costs given), fits the bands of all
stages jointly with Learn then Test over the cascade's joint decision
(``_cascade_fit``) and returns a ``CascadePolicy``: the stages (with the
spec and template hash each was scored with), their bands, alpha, delta,
n and the method. ``judgelab.evaluators.Cascade(stages, policy=...)``
applies it and refuses a stage whose hashes differ.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.policy._cascade_fit import CascadeFitOptions, fit_cascade_arrays
from judgelab.calibration.policy._fit_result import PolicyFit
from judgelab.errors import DataError, ParameterError
from judgelab.evaluators import CASCADE_METHOD, CascadePolicy, CascadeStage, Policy, Stage, load_cascade

__all__ = ["CascadePolicy", "CascadeStage", "StageRows", "aligned_stages", "fit_cascade", "load_cascade"]


@dataclass(frozen=True)
class StageRows:
    """The stages' records aligned on the rows every stage scored: scores ``(K, n)``, labels, units, splits."""

    scores: npt.NDArray[np.float64]
    labels: npt.NDArray[np.int_]
    units: npt.NDArray[np.str_]
    splits: npt.NDArray[np.str_]  # "dev", "test" or "" per row (stage 1's records)
    ids: list[str]
    records: list[list[ScoreRecord]]
    task: str
    dropped: int


def _one(values: AbstractSet[str | None], what: str, k: int, name: str) -> str | None:
    """The one value the stage's records share (None when none has one); a DataError when they differ."""
    values = values - {None, ""}
    if len(values) > 1:
        raise DataError(f"Stage {k + 1} ({name}) mixes {what}s {sorted(map(str, values))}; one run per judge.")
    return next(iter(values)) if values else None


def aligned_stages(stage_records: Sequence[Sequence[ScoreRecord]], names: Sequence[str] | None = None) -> StageRows:
    """Check the stages' records are the same rows of one set and task, and align them.

    Raises
    ------
    DataError
        An empty cascade; a stage with another task, other rows, other row
        content (another set) or other labels than stage 1 (the message
        names the stage).
    """
    if not stage_records:
        raise DataError("A cascade needs at least one stage; got none. Pass one calibration run per stage, cheapest first.")
    names = list(names or [f"stage {k + 1}" for k in range(len(stage_records))])
    first: dict[str, ScoreRecord] = {}
    by_stage: list[dict[str, ScoreRecord]] = []
    task = None
    for k, recs in enumerate(stage_records):
        if not recs:
            raise DataError(f"Stage {k + 1} ({names[k]}) has no records; score the set with that judge first.")
        t = _one({r.task for r in recs}, "task", k, names[k])
        if task is None:
            task = t
        elif t != task:
            raise DataError(f"Stage {k + 1} ({names[k]}) scored task {t!r}, stage 1 task {task!r}; fit a cascade on one task.")
        rows = {r.id: r for r in recs}
        if k == 0:
            first = rows
        else:
            _same_rows(k, names[k], rows, first)
        by_stage.append(rows)
    ids = [i for i in first if all(by_stage[k][i].ok for k in range(len(by_stage)))]
    if not ids:
        raise DataError("No row was scored successfully by every stage; no cascade can be fitted.")
    scores = np.array([[by_stage[k][i].score for i in ids] for k in range(len(by_stage))], dtype=float)
    labels = np.array([first[i].label for i in ids], dtype=int)
    units = np.array([first[i].unit for i in ids])
    splits = np.array([first[i].split or "" for i in ids])
    return StageRows(scores, labels, units, splits, ids, [[s[i] for i in ids] for s in by_stage], str(task),
                     len(first) - len(ids))


def _same_rows(k: int, name: str, rows: dict[str, ScoreRecord], first: dict[str, ScoreRecord]) -> None:
    missing, extra = set(first) - set(rows), set(rows) - set(first)
    if missing or extra:
        example = sorted(missing or extra)[0]
        raise DataError(
            f"Stage {k + 1} ({name}) was scored on other rows than stage 1: {len(missing)} of stage 1's rows missing, "
            f"{len(extra)} extra (e.g. {example!r}). Score every stage on the same set and --limit.")
    for i, r in rows.items():
        a = first[i]
        if a.row_hash and r.row_hash and a.row_hash != r.row_hash:
            raise DataError(f"Stage {k + 1} ({name}) scored row {i!r} with other content than stage 1 (another set or "
                            "version of it); score every stage on the same set.")
        if a.label != r.label:
            raise DataError(f"Stage {k + 1} ({name}) has label {r.label} for row {i!r}, stage 1 {a.label}; "
                            "the runs are not of the same set.")


def _stage_costs(al: StageRows, options: CascadeFitOptions, names: Sequence[str]) -> tuple[tuple[float, ...], str]:
    if options.costs is not None:
        if len(options.costs) != len(al.records):
            raise ParameterError(f"Got {len(options.costs)} costs for {len(al.records)} stages; give one --cost per stage.")
        return tuple(float(c) for c in options.costs), "given cost"
    out = []
    for k, recs in enumerate(al.records):
        tokens = [r.prompt_tokens for r in recs if r.prompt_tokens is not None]
        if not tokens:
            raise DataError(f"Stage {k + 1} ({names[k]}) records no prompt tokens; give the stages' costs (--cost).")
        out.append(float(np.mean(tokens)))
    return tuple(out), "prompt tokens"


def fit_cascade(stage_records: Sequence[Sequence[ScoreRecord]], options: CascadeFitOptions | None = None, *,
                names: Sequence[str] | None = None, runs: Sequence[str] | None = None,
                set_name: str | None = None) -> Policy:
    """Fit a cascade's bands on calibration runs of the same rows (one run per stage, cheapest first).

    Parameters
    ----------
    stage_records
        Every stage's scored records (``read_scores``) of one task and set.
    options
        ``CascadeFitOptions``; ``costs=None`` prices each stage at its mean prompt tokens per row.
    names, runs, set_name
        Recorded in the cascade (default names: the stages' models).

    Returns
    -------
    Policy
        Of kind ``"cascade"``; ``feasible=False`` (abstain on every row, and ``rows_needed``) when nothing is certified.
    """
    options = options or CascadeFitOptions()
    models = [_one({r.model for r in recs}, "model", k, f"stage {k + 1}") if recs else None
              for k, recs in enumerate(stage_records)]
    names = list(names or [m or f"stage {k + 1}" for k, m in enumerate(models)])
    al = aligned_stages(stage_records, names)
    costs, unit = _stage_costs(al, options, names)
    fit = fit_cascade_arrays(al.scores, al.labels, al.units, replace(options, costs=costs))
    options = replace(options, costs=costs)
    return _policy(fit, al, options, unit, names=names, models=models, runs=runs, set_name=set_name)


def _policy(fit: PolicyFit, al: StageRows, options: CascadeFitOptions, unit: str, *, names: Sequence[str],
            models: Sequence[str | None], runs: Sequence[str] | None, set_name: str | None) -> Policy:
    costs = options.stage_costs(len(al.records))
    stages = []
    for k, (recs, band) in enumerate(zip(al.records, fit.bands)):
        stages.append(Stage(
            name=names[k], model=models[k], evaluator=_one({r.evaluator for r in recs}, "evaluator", k, names[k]),
            spec_hash=_one({r.spec_hash for r in recs}, "spec hash", k, names[k]),
            template_hash=_one({r.template_hash for r in recs}, "template hash", k, names[k]),
            lower=band.lower, upper=band.upper, cost=costs[k], run=runs[k] if runs else None))
    abstain = options.abstain(np.asarray(costs))
    note = fit.note + (f" {al.dropped} row(s) not scored by every stage were left out." if al.dropped else "")
    return Policy(
        kind="cascade", task=al.task, stages=stages, alpha=options.alpha, delta=options.delta, feasible=fit.feasible,
        n=fit.n, n_units=fit.n_units, unit_size=fit.unit_size, method=CASCADE_METHOD, cost_unit=unit,
        abstain_cost=abstain, ordering_fraction=options.ordering_fraction, seed=options.seed, set=set_name,
        calibration=fit.calibration, rows_needed=fit.rows_needed, units_needed=fit.units_needed, note=note,
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
