"""``judgelab jury RUN_1 RUN_2 ...``: a jury of judges compared with its members, from saved runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from judgelab.cli._options import print_interval_warning


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    j = subparsers.add_parser(
        "jury",
        help="a jury of judges from their runs on the same rows: metrics with paired intervals, kappa, self-preference",
        description="Combine the members' saved scores with the Jury evaluator's rule and compare the jury "
        "with each member on the same rows (AUROC, balanced accuracy, ECE with paired bootstrap intervals), "
        "with Fleiss' kappa and self-preference per family (on sets whose rows name their generator). Each member "
        "decides at its run's shipped threshold (metrics.json), the mean-logit jury at their mean logit.",
    )
    j.add_argument("runs", nargs="+", metavar="RUN", help="calibrate output folders (or scores.jsonl), one per member")
    j.add_argument("--task", help="the task, when the runs hold several")
    j.add_argument("--combine", default="mean-logit", choices=("mean-logit", "vote"), help="default mean-logit")
    j.add_argument("--resamples", type=int, default=1000)
    j.add_argument("--out", default="runs/jury", help="output folder for jury.md (default runs/jury)")
    j.set_defaults(func=run_jury)


def run_jury(args: argparse.Namespace) -> int:
    from judgelab.calibration import jury_report
    from judgelab.cli._runs import load_run

    loaded = [load_run(r, args.task) for r in args.runs]
    records = [recs for recs, *_ in loaded]
    thresholds = [th for _, _, th, _ in loaded]
    report = jury_report(records, combine=args.combine, thresholds=thresholds, n_resamples=args.resamples)
    path = report.write(Path(args.out) / "jury.md")
    print("\n".join(report.lines()))
    print_interval_warning([r.unit for r in records[0] if r.ok], what="jury intervals")
    print(f"report: {path}")
    return 0
