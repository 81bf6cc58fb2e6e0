"""``judgelab estimate``: the share of truly good answers in unlabelled traffic (prediction-powered)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "estimate",
        help="corrected share of good answers in unlabelled traffic (prediction-powered inference)",
        description="The judge's verdicts on all the traffic, corrected by its errors on a small labelled "
        "random sample of the same traffic (Angelopoulos et al., 2023, Science). Prints the corrected share "
        "with its confidence interval beside the judge's naive pass rate. Sets that are not scored yet are "
        "scored with the run's model; traffic rows need no label.",
    )
    p.add_argument("--run", required=True, help="calibrate output folder: the judge, its task and threshold")
    p.add_argument("--labelled", required=True, help="labelled JSONL (or a scored run) sampled from the traffic")
    p.add_argument("--unlabelled", required=True, help="traffic JSONL without labels (or a scored run)")
    p.add_argument("--task", help="the task, when the run holds several")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--model", help="model to score with (default: the run's)")
    p.add_argument("--out", default="runs/estimate", help="where scored sets are written (default runs/estimate)")
    p.add_argument("--threads", type=int, help="CPU threads for the model")
    p.add_argument("--json", action="store_true", help="print the estimate as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgelab.calibration import estimate_pass_rate
    from judgelab.cli._runs import load_run, read_input, score_input

    base, task, threshold, meta = load_run(args.run, args.task)
    model = args.model or next((r.model for r in base if r.model), None) or meta.model
    out = Path(args.out)
    # both files are read (and a bad line reported) before anything is scored
    lab_in = read_input(args.labelled, task=task)
    unl_in = read_input(args.unlabelled, task=task, unlabelled=True)
    lab = score_input(lab_in, model=model, out=out / "labelled", threads=args.threads)
    unl = score_input(unl_in, model=model, out=out / "unlabelled", threads=args.threads)
    est = estimate_pass_rate(lab, unl, threshold=threshold, confidence=args.confidence)
    if args.json:
        print(json.dumps(est.to_dict(), indent=2))
        return 0
    level = f"{args.confidence:.0%}"
    print(f"{task}: share of good answers {est.corrected} ({level} CI, prediction-powered: "
          f"{est.n_unlabelled} traffic rows, {est.n_labelled} labelled)")
    print(f"  judge's naive pass rate {est.naive} at threshold {threshold:.3f}"
          f" (it leans {'towards PASS' if est.rectifier > 0 else 'towards FAIL'} by {abs(est.rectifier):.3f})")
    print(f"  labelled rows alone: {est.classical}")
    return 0
