"""The out-of-source bench that admits or refuses a candidate adapter (issue 62's ship rule).

    python benchmarks/bench_adapters.py --data ../shared/data --out runs/bench-adapters \\
        --judge previous=runs/clean1/gemma-3-270m-judge-clean1.toml --judge candidate=runs/rel2/judge.toml \\
        --results benchmarks/results/bench/adapters-LABEL.json

Every judge (the shipped ``gemma-3-270m-judge``, the baseline unless ``--baseline`` names another, and each
``--judge NAME=SPEC``) is scored
on sets no shipped adapter trains on: WiCE (Wikipedia citations), FaithBench (news summaries with
model-written errors), HaluEval QA as fact-check and as relevancy rows, SummEdits' news and ectsum
(earnings-call) domains (only its scitldr domain is a training source), and the starter set (its
fact-check rows come from training sources' corpora, held out; its SQuAD relevancy rows are from
SQuAD's dev articles, disjoint from the train articles ``--squad`` trains on). ``judgelab bench
--baseline gemma-3-270m-judge`` gives each judge's paired difference per column and whether it is
admitted: worse beyond its interval in no column, better on the mean. The leaderboard goes into a
results file (``results_file.write_results``: command, commit and dirty flag, CPU flags, versions).

Rerunning with the same ``--out`` resumes: only missing rows are scored, and a judge added later is
scored alone. The speed columns are only meaningful on a quiet machine. ``--no-long-documents`` leaves out
WiCE and ectsum, whose documents run to thousands of words: on 2 cores they are most of the bench's time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import command_line, script_argv, write_results  # noqa: E402

from judgelab.bench import BenchSpec, bench  # noqa: E402

SHIPPED = "gemma-3-270m-judge"


def out_of_source_sets(data: Path, *, long_documents: bool = True) -> list[str]:
    """The bench's sets, as ``--set`` takes them; without ``long_documents``, not WiCE and ectsum."""
    long = [f"wice:{data / 'wice' / 'dev.jsonl'}", f"summedits:{data / 'summedits' / 'summedits_ectsum.json'}"]
    return [*(long if long_documents else []), f"faithbench:{data / 'faithbench' / 'FaithBench.csv'}",
            f"halueval-qa:{data / 'halueval' / 'qa_one-turn.jsonl'}",
            f"summedits:{data / 'summedits' / 'summedits_news.json'}",
            f"halueval-qa-relevancy:{data / 'halueval' / 'qa_one-turn.jsonl'}", "starter"]


def _judge(text: str) -> dict[str, str]:
    name, sep, model = text.partition("=")
    if not sep or not name or not model:
        raise argparse.ArgumentTypeError(f"--judge takes NAME=MODEL (a spec .toml or a model id), not {text!r}")
    return {"name": name, "model": model}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the shared data folder (wice/, halueval/, ...)")
    ap.add_argument("--out", type=Path, default=Path("runs/bench-adapters"))
    ap.add_argument("--judge", type=_judge, action="append", default=[], metavar="NAME=MODEL",
                    help="a judge to compare with the shipped one (repeatable)")
    ap.add_argument("--baseline", default=SHIPPED, metavar="NAME",
                    help="the judge the others are admitted against (default the shipped one; name a --judge to "
                    "admit the shipped judge against it, e.g. the spec it replaces)")
    ap.add_argument("--limit", type=int, default=80, help="rows per set and task (default 80)")
    ap.add_argument("--no-long-documents", action="store_true",
                    help="leave out WiCE and ectsum, whose documents run to thousands of words (dozens of chunks a "
                    "row: most of the bench's time on 2 cores)")
    ap.add_argument("--results", type=Path, required=True)
    args = ap.parse_args(argv)
    command_argv = script_argv(__file__, argv)
    spec = BenchSpec.checked({
        "judge": [{"model": SHIPPED}, *args.judge], "out": str(args.out),
        "sets": out_of_source_sets(args.data, long_documents=not args.no_long_documents),
        "limit": args.limit, "baseline": args.baseline,
    })
    result = bench(spec, progress=False, command=command_line(command_argv))
    write_results(args.results, {"leaderboard": json.loads(result.leaderboard.model_dump_json())},
                  scrub={args.data: "DATA", args.out: "OUT"}, argv=command_argv)
    print((args.out / "leaderboard.md").read_text(encoding="utf-8").split("\n## ")[0])
    print(f"results: {args.results}")
    return 0 if result.complete else 3


if __name__ == "__main__":
    sys.exit(main())
