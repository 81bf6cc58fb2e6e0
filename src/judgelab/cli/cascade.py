"""``judgelab cascade fit RUN_1 RUN_2 ...``: a cascade of judges fitted from saved runs."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.cli._options import add_allow_partial, print_help_of, print_interval_warning
from judgelab.errors import ParameterError

if TYPE_CHECKING:
    from judgelab.calibration import ScoreRecord


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "cascade",
        help="fit a cascade of judges with a guaranteed error (writes cascade.json and a report)",
        description="Cascades of judges: the cheap judge decides where its band certifies, the rest escalates.",
    )
    sub = p.add_subparsers(dest="cascade_command", metavar="ACTION")
    f = sub.add_parser(
        "fit",
        help="fit every stage's band jointly on calibration runs of the same rows (no model needed)",
        description="Learn then Test over the joint cascade decision: the error among the rows the cascade "
        "decides is <= alpha with probability >= 1 - delta; among the certified cascades the one of least "
        "expected cost (stage costs, plus --abstain-cost per abstention) is written. Runs are given cheapest "
        "first, all scored on the same rows of one set.",
    )
    f.add_argument("runs", nargs="+", metavar="RUN", help="calibrate output folders (or scores.jsonl), one per stage")
    f.add_argument("--task", help="the task, when the runs hold several")
    f.add_argument("--alpha", type=float, default=0.1, help="error level among decided rows (default 0.1)")
    f.add_argument("--delta", type=float, default=0.1, help="allowed failure probability (default 0.1)")
    f.add_argument("--cost", help="comma-separated cost of a row at each stage (default: its mean prompt tokens)")
    f.add_argument("--abstain-cost", type=float, help="cost of an abstention (default 10 x a row through every stage)")
    f.add_argument("--seed", type=int, default=0, help="seed of the ordering/testing split and folds (default 0)")
    f.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the held-out intervals")
    f.add_argument("--no-plots", action="store_true", help="skip cascade.png")
    f.add_argument("--out", default="runs/cascade", help="output folder for cascade.json and cascade.md (default runs/cascade)")
    add_allow_partial(f)
    f.set_defaults(func=run_fit)
    p.set_defaults(func=print_help_of(p))


def _costs(text: str | None, n: int) -> tuple[float, ...] | None:
    if not text:
        return None
    try:
        costs = tuple(float(c) for c in text.split(","))
    except ValueError:
        raise ParameterError(f"--cost must be comma-separated numbers, one per stage; got {text!r}.") from None
    if len(costs) != n:
        raise ParameterError(f"--cost gives {len(costs)} costs for {n} stages; give one per stage.")
    return costs


def _load(runs: Sequence[str], task: str | None) -> tuple[list[list[ScoreRecord]], str | None, list[float]]:
    from judgelab.cli._runs import load_run

    loaded = [load_run(r, task) for r in runs]
    return [recs for recs, *_ in loaded], loaded[0][3].set, [th for _, _, th, _ in loaded]


def run_fit(args: argparse.Namespace) -> int:
    from judgelab.calibration import (
        CascadeFitOptions,
        aligned_stages,
        check_publishable,
        fit_cascade,
        heldout_cascade,
        run_completeness,
        write_cascade_report,
    )

    if not args.runs:
        raise ParameterError("judgelab cascade fit needs at least one run (one per stage).")
    records, set_name, _ = _load(args.runs, args.task)
    for stage in records:  # a stage whose rows failed is a partial run: no cascade is fitted from it
        check_publishable(run_completeness(stage), allow_partial=args.allow_partial, command="cascade fit")
    options = CascadeFitOptions(alpha=args.alpha, delta=args.delta, costs=_costs(args.cost, len(records)),
                                abstain_cost=args.abstain_cost, seed=args.seed)
    policy = fit_cascade(records, options, runs=[str(r) for r in args.runs], set_name=set_name)
    held = heldout_cascade(aligned_stages(records, [s.name for s in policy.stages]), policy, n_resamples=args.resamples)
    policy = policy.model_copy(update={"heldout": held})
    out = Path(args.out)
    path = policy.save(out / "cascade.json")
    report = write_cascade_report(policy, held, out, figures=not args.no_plots)
    print(policy.describe())
    if held:
        for name, st in held.systems.items():
            print(f"  held-out {name}: coverage {st.coverage}, error {st.error}, cost {st.cost if st.cost is not None else 'n/a'}")
        print_interval_warning([r.unit for r in records[0] if r.ok], what="held-out cascade intervals")
    print(f"cascade: {path}\nreport: {report}")
    return 0

