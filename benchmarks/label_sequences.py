"""What labels read as token sequences cost, and that single-token labels cost what they did.

Run from the repository root, once with this tree and once with the tree
before sequence labels (for the single-token baseline)::

    python benchmarks/label_sequences.py --tag branch --out benchmarks/results/label_sequences_branch.json
    git archive <commit before> src | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base/src python benchmarks/label_sequences.py --tag base --sets yes-no \
        --out benchmarks/results/label_sequences_base.json

gemma-3-270m (llama.cpp) judges the fact-check rows of ``calibration/starter.jsonl``
as one ``judge_many`` batch per round, the caches emptied before each round.
For each label set it records the median seconds a round, the prompt tokens
the backend evaluated (``tokens_evaluated``: a cost that machine load does not
blur) and every probability, so two runs can be compared number for number.
The file (``--out``, through ``results_file.write_results``) also records this
script's command, the commit and whether the tree was dirty, the CPU model and
its instruction-set flags, llama.cpp's system info, the core count and the
library versions: the commit is this checkout's, so a base run is told apart by
its ``--tag`` (the ``PYTHONPATH`` tree it scored with is not in the command).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402

SETS = {
    "yes-no": ("Yes", "No"),
    "grade": ("GRADE: C", "GRADE: I"),  # a shared prefix, then one token each
    "brackets": ("[[A]]", "[[B]]"),  # a shared prefix, one token each, then "]]" (one way on: not read)
    "deeper": ("Yes, fully", "Yes, partly", "No"),  # read where they part: after the prompt, then after "Yes,"
}


def _prompts(model, n: int) -> list[str]:
    rows = [json.loads(line) for line in (REPO / "calibration" / "starter.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["task"] == "fact-check"][:n]
    return [model.render(f"Document: {' '.join(r['documents'])}\nClaim: {r['response']}\n"
                         "Is the claim supported by the document?") for r in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tag", required=True, help="a name for this run (base / branch)")
    ap.add_argument("--sets", default=",".join(SETS), help=f"label sets to time, of {', '.join(SETS)}")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from judgelab.engine import load_model

    model = load_model("gemma-3-270m", n_threads=args.threads)
    prompts = _prompts(model, args.prompts)
    model.judge_many(prompts[:1], SETS["yes-no"])  # first use: the label head's one-off check
    result: dict = {"tag": args.tag, "threads": args.threads, "prompts": len(prompts), "rounds": args.rounds,
                    "prompt_tokens": sum(len(model.tokenize(p)) for p in prompts), "sets": {}}
    for name in args.sets.split(","):
        labels = SETS[name]
        times, evaluated = [], []
        for _ in range(args.rounds):
            model.reset_caches()
            before = model.backend.tokens_evaluated
            t0 = time.perf_counter()
            judgments = model.judge_many(prompts, labels)
            times.append(time.perf_counter() - t0)
            evaluated.append(model.backend.tokens_evaluated - before)
        result["sets"][name] = {
            "labels": labels, "median_s": statistics.median(times), "tokens_evaluated": evaluated[0],
            "probabilities": [j.probabilities for j in judgments],
        }
        print(f"{args.tag:8s} {name:9s} median {statistics.median(times) * 1000:8.1f} ms / {len(prompts)} prompts, "
              f"{evaluated[0]} tokens evaluated")
    write_results(args.out, result, argv=script_argv(__file__, argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
