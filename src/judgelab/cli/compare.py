"""``judgelab compare RUN_A RUN_B``: paired comparison of two judges on the same rows."""

from __future__ import annotations

import argparse
import json

from judgelab.cli._runs import load_run


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare two calibration runs on the same rows (paired bootstrap, McNemar)",
        description="RUN_A and RUN_B are calibrate output folders or scores.jsonl files. Each run's "
        "shipped threshold is read from its metrics.json when there is one, else 0.5. The bootstrap draws "
        "both judges' scores of a row together, and rows that share meta.pair as one group.",
    )
    p.add_argument("run_a", metavar="RUN_A")
    p.add_argument("run_b", metavar="RUN_B")
    p.add_argument("--task", help="compare only rows of this task")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgelab.calibration import compare_runs, interval_warning

    a, _, ta, _ = load_run(args.run_a, args.task)
    b, _, tb, _ = load_run(args.run_b, args.task)
    c = compare_runs(a, b, threshold_a=ta, threshold_b=tb, n_resamples=args.resamples, seed=args.seed)
    shared = {r.id for r in b if r.ok}
    warning = interval_warning([r.unit for r in a if r.ok and r.id in shared], c.difference,
                               what="paired-difference intervals")
    if args.json:
        print(json.dumps(c.to_dict() | ({"warnings": [warning]} if warning else {}), indent=2))
        return 0
    print(f"{c.n} shared rows (A threshold {ta:.3f}, B threshold {tb:.3f}); paired bootstrap: {c.resampling.describe()}")
    print(f"{'metric':<20}{'A':>8}{'B':>8}   B - A [95% CI]")
    for k, d in c.difference.items():
        print(f"{k:<20}{c.metrics_a[k]:>8.3f}{c.metrics_b[k]:>8.3f}   {d:+.3f}")
    print(f"McNemar: only A right {c.mcnemar_b}, only B right {c.mcnemar_c}, p = {c.mcnemar_p:.3g}")
    if warning:
        print(f"warning: {warning}")
    return 0
