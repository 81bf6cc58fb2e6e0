"""``judgelab stress``: calibrate a judge, then measure what moves it (attacks, perturbations, consistency)."""

from __future__ import annotations

import argparse

from judgelab.cli._options import add_allow_partial, add_scoring_run_options, print_interval_warning
from judgelab.specs import DEFAULT_MODEL_ID


def add_stress_options(p: argparse.ArgumentParser) -> None:
    """The stress options shared by ``judgelab stress`` and ``judgelab calibrate --stress``."""
    p.add_argument("--evaluator", help="fact-checking, relevancy, bespoke-minicheck, NAME+fenced or module:callable "
                   "(default: the task's evaluator)")
    p.add_argument("--attacks", help="comma-separated perturbations: keys (inject-ignore@end), names (both "
                   "positions), families ('fake verdict', benign), 'default', 'all' or module:callable (a transform "
                   "of the judged text); default: a small set of each family, or the --attacks-file attacks")
    p.add_argument("--attacks-file", metavar="FILE",
                   help="JSONL of your own attacks, one per line: name, family, where (start, end or evidence) and "
                   "text, or transform (module:callable); reported like the built-in ones")
    p.add_argument("--consistency", default="noul,choice,paraphrase",
                   help="comma-separated consistency checks: noul, choice, paraphrase, or 'none' (default: all three)")
    p.add_argument("--fence", action="store_true", help="also measure the fenced template on the same rows (before/after)")
    p.add_argument("--label-mass", action="store_true",
                   help="also measure the labels' share of the next-token probability (reads the full output layer)")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "stress",
        help="stress a judge on a labelled set: injection, fake verdicts, spoofing, consistency, with intervals",
        description="Calibrate a judge on a labelled set (as 'judgelab calibrate'), then judge perturbed copies of "
        "the same rows with the same evaluator and threshold, and add a Robustness section to the report. "
        "Resumable; a finished run is re-analysed without the model.",
    )
    p.add_argument("--model", default=DEFAULT_MODEL_ID, help=f"model id, spec .toml or .gguf path (default {DEFAULT_MODEL_ID})")
    p.add_argument("--set", dest="set", metavar="FILE|KIND:PATH",
                   help="labelled JSONL file or KIND:PATH to import (e.g. summedits:DIR, wice:FILE); default: the starter set")
    p.add_argument("--task", action="append", help="keep only rows of this task (repeatable)")
    p.add_argument("--threshold-strategy", default="balanced_accuracy", help="as for calibrate (default balanced_accuracy)")
    p.add_argument("--calibrator", default="auto", choices=("auto", "raw", "temperature", "platt", "isotonic"),
                   help="as for calibrate")
    p.add_argument("--limit", type=int, help="stress at most this many rows per task: whole units spread over the "
                   "set, both labels, seeded by --seed (as for calibrate)")
    add_scoring_run_options(p, out="runs/stress", seed_help="seed of the perturbations, folds and bootstrap")
    add_stress_options(p)
    add_allow_partial(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``stress`` from ``judgelab stress`` or ``judgelab calibrate --stress`` arguments."""
    from judgelab.calibration import StressOptions, stress

    options = {"backend": args.backend}
    if args.threads:
        options["n_threads"] = args.threads
    checks = [] if args.consistency.strip() == "none" else [c.strip() for c in args.consistency.split(",") if c.strip()]
    result = stress(
        args.model, args.set, args.out, evaluator=args.evaluator, task=args.task, model_options=options,
        options=StressOptions(
            attacks=args.attacks, attacks_file=args.attacks_file, consistency=checks, fence=args.fence,
            label_mass=args.label_mass, limit=args.limit, threshold_strategy=args.threshold_strategy,
            calibrator=args.calibrator, batch_size=args.batch_size, n_resamples=args.resamples, seed=args.seed,
            progress=not args.no_progress, figures=not args.no_plots, allow_partial=args.allow_partial,
        ),
    )
    for task, a in result.calibration.analyses.items():
        print(f"{task}: {a.headline()}")
        for warning in a.warnings():
            print(f"  warning: {warning}")
    for task, s in result.tasks.items():
        partial = f"Partial run, {s.n_errors} stressed row(s) failed: " if s.n_errors else ""
        print(f"{task} robustness: {partial}{s.headline()}")
        print_interval_warning([r.unit for r in result.calibration.records if r.task == task and r.ok],
                               what="robustness intervals")
        if s.fence is not None:
            print(f"  fenced template: {s.fence.verdict()}")
    print(f"report: {result.files['report_html']}")
    return 0
