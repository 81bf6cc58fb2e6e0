"""``judgelab policy RUN``: a pass/fail/abstain policy with a guaranteed error rate, from saved scores."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "policy",
        help="choose pass/fail/abstain thresholds with a guaranteed error rate (writes policy.json)",
        description="Learn-then-Test on a calibrate run's scores (no model needed): FAIL below the lower "
        "threshold, PASS at or above the upper one, ABSTAIN between, with the error rate among decided rows "
        "<= alpha with probability >= 1 - delta. Rows sharing meta.pair count as one unit.",
    )
    p.add_argument("run", metavar="RUN", help="calibrate output folder or scores.jsonl")
    p.add_argument("--task", help="the task, when the run holds several")
    p.add_argument("--alpha", type=float, default=0.1, help="risk level (default 0.1)")
    p.add_argument("--delta", type=float, default=0.1, help="allowed failure probability (default 0.1)")
    p.add_argument("--risk", choices=("error", "false-pass"), default="error",
                   help="error: wrong decisions among decided rows (default); false-pass: wrong passes among them")
    p.add_argument("--mondrian", action="store_true", help="also bound P(PASS | label 0) <= alpha")
    p.add_argument("--seed", type=int, default=0, help="seed of the ordering/testing split (default 0)")
    p.add_argument("--out", help="policy file (default RUN/policy.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgelab.calibration import LTTSettings, fit_and_save_policy
    from judgelab.cli._options import print_interval_warning
    from judgelab.cli._runs import load_run
    from judgelab.evaluators import HeldoutPolicy

    records, task, _, meta = load_run(args.run, args.task)
    base = Path(args.run)
    out = Path(args.out) if args.out else (base if base.is_dir() else base.parent) / "policy.json"
    settings = LTTSettings(alpha=args.alpha, delta=args.delta, risk=args.risk, mondrian=args.mondrian, seed=args.seed)
    policy = fit_and_save_policy(records, out, settings, set_name=meta.set)
    held = policy.heldout
    print(f"{task}: {policy.describe()}")
    if isinstance(held, HeldoutPolicy):
        print(f"  held-out ({held.mode}): coverage {held.coverage}, {policy.risk} among decided "
              f"{format(held.risk) if held.risk is not None else 'n/a'} on {held.n} rows")
    print_interval_warning([r.unit for r in records if r.ok], what="policy intervals")
    print(f"policy: {out}")
    return 0
