"""``judgelab gate BASELINE_RUN --set NEW``: fail CI when the judge drifted or changed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "gate",
        help="CI drift gate: exit 1 when the judge, its template, the label mix or its metric changed",
        description="Compare a new labelled set (scored here with the baseline's model, or an already "
        "scored run) with a baseline calibrate run; rows are matched by id. Exits 1, with a first line saying "
        "why, when the model spec, template or question definitions changed, more labels of shared rows "
        "changed than --max-label-changes, the label mix shifted beyond --label-tolerance, the new run has fewer "
        "labelled rows than --min-rows or a Cohen's kappa below --min-kappa, or the metric "
        "dropped beyond its uncertainty (a paired bootstrap on the shared rows, each row's correctness under "
        "the baseline against under the new set; an unpaired one of the whole runs when some rows are in "
        "one run only); else exits 0. Either way it prints every test with the rows it covered and what "
        "changed in the shared rows.",
    )
    p.add_argument("baseline", metavar="BASELINE_RUN", help="calibrate output folder or scores.jsonl")
    p.add_argument("--set", dest="set", required=True, metavar="NEW",
                   help="labelled JSONL (or KIND:PATH) to score, or a scored run folder / scores.jsonl")
    p.add_argument("--task", help="the task, when the baseline holds several")
    p.add_argument("--metric", default="balanced_accuracy", help="metric to guard (default balanced_accuracy)")
    p.add_argument("--max-drop", default="auto",
                   help="auto (default): fail on a significant drop; X: fail when the drop exceeds X beyond doubt")
    p.add_argument("--label-tolerance", type=float, default=0.1,
                   help="largest tolerated change of the label-1 share (default 0.1)")
    p.add_argument("--max-label-changes", default="5%", metavar="P%|N",
                   help="shared rows whose label may change before the gate fails: a percentage of the shared "
                   "rows (default 5%%), a fraction below 1, or a count")
    p.add_argument("--min-rows", type=int, metavar="N",
                   help="fail unless the new run has at least N scored, labelled rows (default: no floor)")
    p.add_argument("--min-kappa", type=float, metavar="K",
                   help="fail unless the new run's Cohen's kappa against its labels, at the baseline's threshold, "
                   "is at least K (the point estimate; its interval is printed; default: no floor)")
    p.add_argument("--corrections", metavar="FILE",
                   help="a corrections.jsonl (judgelab view): apply its label corrections to the new set or run first; "
                   "the rows they relabel are reported with the other label changes")
    p.add_argument("--json", action="store_true", help="print the result as JSON (exit code as without)")
    p.add_argument("--model", help="model to score the new set with (default: the baseline's)")
    p.add_argument("--out", default="runs/gate", help="where a scored new set is written (default runs/gate)")
    p.add_argument("--threads", type=int, help="CPU threads for the model")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    from judgelab.cli._options import add_allow_partial

    add_allow_partial(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgelab.calibration import GateBootstrap, GateFloors, apply_corrections, gate, interval_warning
    from judgelab.cli._runs import Input, load_run, read_input, score_input

    floors = GateFloors(args.min_rows, args.min_kappa)
    floors.check()  # before any run is read or set scored
    base, task, threshold, meta = load_run(args.baseline, args.task)
    model = args.model or next((r.model for r in base if r.model), None) or meta.model
    inp = read_input(args.set, task=task)
    applied = None
    if args.corrections:  # relabel before scoring: a set's rows, or a scored run's records
        if inp.rows is not None:
            rows, applied = apply_corrections(inp.rows, args.corrections)
            inp = Input(inp.spec, inp.task, rows=rows)
        elif inp.records is not None:
            records, applied = apply_corrections(inp.records, args.corrections)
            inp = Input(inp.spec, inp.task, records=records)
    new = score_input(inp, model=model, out=Path(args.out), threads=args.threads, allow_partial=args.allow_partial)
    result = gate(base, new, threshold=threshold, metric=args.metric, max_drop=args.max_drop,
                  label_tolerance=args.label_tolerance, max_label_changes=args.max_label_changes,
                  resampling=GateBootstrap(n_resamples=args.resamples, seed=args.seed), floors=floors)
    warning = interval_warning([r.unit for r in new if r.ok], what="gate intervals")
    if args.json:
        extra = {} if applied is None else {"corrections": {"file": applied.path, "sha256": applied.sha256,
                                                            "corrected": list(applied.corrected)}}
        print(json.dumps({**result.to_dict(), **extra} | ({"warnings": [warning]} if warning else {}), indent=2))
        return 0 if result.passed else 1
    print(f"judgelab gate: FAIL: {result.reason}" if not result.passed else f"judgelab gate: ok ({task})")
    for line in result.lines():
        print(f"  {line}")
    if warning:
        print(f"  warning: {warning}")
    if applied is not None:
        print(f"  corrections: {applied.describe()}")
    return 0 if result.passed else 1
