"""``judgelab bench``: several judges x several labelled sets in one resumable run, ranked with paired intervals."""

from __future__ import annotations

import argparse
import shlex
import sys

from judgelab.cli._executor_options import add_executor_arguments, executor_from_args, print_executor_report
from judgelab.cli._options import positive_int
from judgelab.errors import ParameterError, PartialRunError

#: Settings a command-line option overrides in a bench file (option dest -> BenchSpec field).
OVERRIDES = {"out": "out", "limit": "limit", "metric": "rank_by", "baseline": "baseline", "repeats": "repeats", "repeat_rows": "repeat_rows",
             "resamples": "n_resamples", "seed": "seed", "batch_size": "batch_size"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "bench",
        help="benchmark several judges on several labelled sets: paired intervals against the best, cost, figures",
        description="Score every judge (--model, repeatable) on every labelled set (--set, repeatable), or the judges "
        "and sets of a bench file, into DIR/cells/<judge>/<set>/scores.jsonl (rerunning resumes; a changed judge or "
        "set rescores only its cells), then rank the judges per set and over sets with paired bootstrap intervals "
        "against the best, and write DIR/leaderboard.json, .md and .html. See docs/bench.md.",
    )
    p.add_argument("bench_file", nargs="?", metavar="BENCH.toml", help="a bench file (judges, sets and settings)")
    p.add_argument("--model", action="append", default=[], metavar="MODEL",
                   help="a judge: embedded id, spec .toml, .gguf path, transformers:ID, openai:URL#NAME or "
                   "ollama:URL#NAME (repeatable)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="FILE|KIND:PATH",
                   help="a labelled set as calibrate --set takes it, or 'starter' (repeatable)")
    p.add_argument("--task", action="append", default=[], help="keep only rows of this task (repeatable)")
    p.add_argument("--out", default=None, help="bench folder (default runs/bench); reruns resume")
    p.add_argument("--limit", type=positive_int, default=None,
                   help="at most this many rows per set and task (whole units spread over the set, seeded)")
    p.add_argument("--metric", choices=("auroc", "balanced_accuracy"), default=None,
                   help="what the ranking compares (default auroc)")
    p.add_argument("--baseline", default=None, metavar="JUDGE",
                   help="compare every judge with this one (its --model argument or name): paired differences per set "
                   "and over sets, and whether each is admitted (worse nowhere beyond the interval, better on the mean)")
    p.add_argument("--repeats", type=int, default=None, help="rescore a sample of each cell K more times (stability)")
    p.add_argument("--repeat-rows", type=positive_int, default=None, help="rows per cell the repeats rescore (default 20)")
    p.add_argument("--resamples", type=positive_int, default=None, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=None, help="seed of the split, the limit and the bootstrap (default 0)")
    p.add_argument("--batch-size", type=positive_int, default=None, help="rows per evaluator call (default 8)")
    p.add_argument("--threads", type=positive_int, help="CPU threads for each in-process judge")
    p.add_argument("--no-plots", action="store_true", help="skip the figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_executor_arguments(p)
    p.set_defaults(func=run)


def _spec(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from judgelab.bench import BenchSpec, JudgeEntry, read_bench_file

    given = {field: getattr(args, dest) for dest, field in OVERRIDES.items() if getattr(args, dest) is not None}
    if args.task:
        given["task"] = tuple(args.task)
    if args.bench_file:
        base = read_bench_file(args.bench_file)
        extra = [JudgeEntry.parse(m) for m in args.model]
        data = {**base.model_dump(by_alias=True), **given}
        data["judge"] = [*base.model_dump(by_alias=True)["judge"], *(e.model_dump() for e in extra)]
        data["sets"] = [*base.sets, *args.sets]
        spec = BenchSpec.checked(data)
    else:
        if not args.model or not args.sets:
            raise ParameterError("judgelab bench needs judges and sets: --model M (repeatable) and --set S (repeatable), "
                                 "or a bench file (judgelab bench bench.toml). See 'judgelab bench --help'.")
        spec = BenchSpec.checked({"judge": [JudgeEntry.parse(m).model_dump() for m in args.model], "sets": args.sets,
                                  **given})
    if args.threads:
        spec = spec.model_copy(update={"judges": tuple(j if j.threads else j.model_copy(update={"threads": args.threads})
                                                       for j in spec.judges)})
    return spec


def run(args: argparse.Namespace) -> int:
    from judgelab.bench import bench, leaderboard_table
    from judgelab.calibration.report import Section, render_markdown

    spec = _spec(args)
    executor = executor_from_args(args)
    command = "judgelab " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "judgelab bench"
    result = bench(spec, executor=executor, progress=not args.no_progress, figures=not args.no_plots, command=command)
    print_executor_report(executor)
    board = result.leaderboard
    print(render_markdown(Section("", (leaderboard_table(board),))).strip().lstrip("#").strip())
    print(f"machine: {board.machine.get('cpu')} ({board.machine.get('cpu_flags')}, {board.machine.get('cores')} cores)")
    for judge, ok in board.admitted.items():
        print(f"against {board.baseline}: {judge} {'admitted' if ok else 'not admitted'}")
    for o in board.missing:
        print(f"missing: {o.judge} on {o.set}: {o.status} ({o.n_scored} of {o.n_rows} rows): {o.error}")
    print(f"leaderboard: {result.files['html']}")
    if not result.complete:
        first = board.missing[0]
        raise PartialRunError(
            f"{len(board.missing)} cell(s) of the bench lack scores (first: {first.judge} on {first.set}: {first.error}); "
            "they are not ranked. The same command resumes them.",
            n_failed=sum(o.n_rows - o.n_scored for o in board.missing),
            n_rows=sum(o.n_rows for o in board.missing), first_error=first.error or "", stopped_early=False)
    return 0
