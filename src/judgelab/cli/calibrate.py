"""``judgelab calibrate``: measure a judge on a labelled set and choose its threshold."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from judgelab.cli._executor_options import add_executor_arguments, executor_from_args, print_executor_report
from judgelab.cli._options import add_allow_partial, add_scoring_run_options, open_unit, positive_int, threshold_strategy
from judgelab.errors import ParameterError
from judgelab.specs import DEFAULT_MODEL_ID

if TYPE_CHECKING:
    from judgelab.calibration import LazyModel
    from judgelab.evaluators import Evaluator


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="measure a judge on a labelled set: metrics, threshold, calibration, bias, report",
        description="Score a labelled set with a judge model (resumable), then write scores.jsonl, "
        "metrics.json, report.md and report.html to --out. With no arguments, runs the embedded "
        "model on the starter set.",
    )
    p.add_argument("--model", default=DEFAULT_MODEL_ID, help=f"model id, spec .toml or .gguf path (default {DEFAULT_MODEL_ID})")
    p.add_argument("--set", dest="set", metavar="FILE|KIND:PATH",
                   help="labelled JSONL file, or KIND:PATH to import (wice, halueval-qa, halueval-general, "
                   "faithbench, llm-aggrefact, ...), or GENERATOR:SET for hard-negative pairs made from SET (d2c, num, "
                   "swap, partial; e.g. num:fever-nli:DIR); default: the starter set")
    p.add_argument("--task", action="append", help="keep only rows of this task (repeatable)")
    p.add_argument("--threshold-strategy", default="balanced_accuracy", type=threshold_strategy,
                   help="balanced_accuracy (default), f1, youden, precision>=X, recall>=X or cost:FP,FN")
    p.add_argument("--calibrator", default="auto", choices=("auto", "raw", "temperature", "platt", "isotonic"),
                   help="calibrator to ship: auto (default: the lowest cross-validated ECE on the tuning rows, "
                   "ties to the simpler), raw (none) or a name; all three are measured, and one that makes the "
                   "held-out ECE worse than raw is not shipped")
    p.add_argument("--self-generators", metavar="PATTERNS",
                   help="comma-separated fnmatch patterns of the judge's own family (default: the model spec's)")
    p.add_argument("--target-error", type=open_unit, default=0.1, help="error target among decided rows for the abstain band")
    p.add_argument("--limit", type=positive_int,
                   help="score at most this many rows per task: whole units (rows sharing meta.pair) spread over "
                   "the set, both labels, seeded by --seed; not the first rows")
    p.add_argument("--skip-invalid", action="store_true", help="skip malformed rows instead of stopping")
    p.add_argument("--corrections", metavar="FILE",
                   help="a corrections.jsonl (written by 'judgelab view' beside the set): apply its label corrections "
                   "to the set's rows (the set file is not changed); metrics.json records how many and the file's sha256")
    add_scoring_run_options(p, out="runs/calibrate", seed_help="random seed for folds and bootstrap")
    add_allow_partial(p)
    from judgelab.cli.stress import add_stress_options

    p.add_argument("--stress", action="store_true", help="also run the stress tests (see 'judgelab stress')")
    add_stress_options(p)
    add_executor_arguments(p)
    p.set_defaults(func=run)


def _named_evaluator(args: argparse.Namespace, options: dict[str, object], executor: object | None,
                     ) -> tuple[LazyModel, dict[str, Evaluator]] | tuple[None, None]:
    """``(model, {task: evaluator})`` for ``--evaluator NAME``; ``(None, None)`` without it."""
    name = getattr(args, "evaluator", None)
    if not name:
        return None, None
    if executor is not None:
        raise ParameterError("calibrate --evaluator does not run on Ray yet: drop --ray, or drop --evaluator "
                             "to score with the task's default evaluator.")
    from judgelab.calibration import LazyModel
    from judgelab.evaluators import build_evaluator, registered_evaluator

    task = args.task[0] if args.task else ("fact-check" if ":" in name else registered_evaluator(name.partition("+")[0]).task)
    if task is None:
        raise ParameterError(f"Evaluator {name!r} is registered without a task; name the rows it scores with --task.")
    model = LazyModel(args.model, options)  # the one lazy loader: a finished run is re-analysed without the weights
    evaluators: dict[str, Evaluator] = {str(task): build_evaluator(name, model, task=task)}
    return model, evaluators


def run(args: argparse.Namespace) -> int:
    from judgelab.calibration import CalibrationOptions, LazyModel, calibrate

    if getattr(args, "stress", False):
        from judgelab.cli.stress import run as run_stress

        if args.ray is not None:
            raise ParameterError(
                "calibrate --stress does not run on Ray yet: drop --ray (the stress run scores "
                "locally), or run 'judgelab calibrate --ray ...' and 'judgelab stress' separately."
            )

        return run_stress(args)

    options = {"backend": args.backend}
    if args.threads:
        options["n_threads"] = args.threads
    patterns = None
    if args.self_generators is not None:
        patterns = tuple(p.strip() for p in args.self_generators.split(",") if p.strip())
    executor = executor_from_args(args)
    judge, evaluators = _named_evaluator(args, options, executor)
    result = calibrate(
        # on Ray each replica loads the model from its id; here it is loaded only if rows must be scored
        judge if judge is not None else args.model if executor is not None else LazyModel(args.model, options),
        args.set,
        args.out,
        task=args.task,
        model_options=options if executor is not None else None,
        executor=executor,
        evaluators=evaluators,
        options=CalibrationOptions(
            threshold_strategy=args.threshold_strategy, calibrator=args.calibrator, self_generators=patterns,
            target_error=args.target_error, limit=args.limit, skip_invalid=args.skip_invalid,
            batch_size=args.batch_size, n_resamples=args.resamples, seed=args.seed,
            progress=not args.no_progress, figures=not args.no_plots, allow_partial=args.allow_partial,
            corrections=args.corrections,
        ),
    )
    print_executor_report(executor)
    for task, a in result.analyses.items():
        print(f"{task}: {a.headline()}")
        if a.metrics.calibrator_choice is not None:
            print(f"  calibrator: {a.metrics.calibrator_choice.reason}")
        for warning in a.warnings():
            print(f"  warning: {warning}")
    if args.corrections:
        from judgelab.calibration import read_metrics

        meta = read_metrics(result.files["metrics"]).meta
        print(f"labels corrected: {meta.labels_corrected} by {meta.corrections} (sha256 {meta.corrections_sha256})")
    print(f"report: {result.files['report_html']}")
    return 0
