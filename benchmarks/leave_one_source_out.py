"""The leave-one-source-out table of docs/tuning.md: for each source, train on all the others, measure on it.

    PYTHONPATH=src python benchmarks/leave_one_source_out.py --runs /work/tune-runs/loso [--sources fib,factcg]

For each source S (``train_default_judge.py``'s option names): ``train_default_judge.py --leave-out S``
(its deletion negatives are left out with it: ``d2c_fib`` with ``fib``), then ``judgelab calibrate`` of
the base ``gemma-3-270m`` and of the run's tuned spec on up to ``--limit`` rows of S that the run held
out, then ``judgelab compare`` (tuned minus base, paired). Every step resumes: a training run continues
from its checkpoint, a calibration from its scores, so the same command picks up where it stopped.
It prints one markdown row per finished source and writes ``RUNS/table.md``.

Budget: one training run is about the shipped adapter's (docs/tuning.md), so seven sources take seven
times that; on a 2-core CPU, run it over several sessions (each rerun resumes), or on a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("mnli", "fever", "snli", "fib", "factcg", "begin", "summedits")
#: The held-out file a run writes for a source (OUT/heldout/NAME.jsonl).
HELDOUT = {"mnli": "mnli-mnli", "fever": "fever-nli-fever_nli", "snli": "snli-esnli_dev", "fib": "fib-fib",
           "factcg": "factcg-CG2C_doc", "begin": "begin-begin", "summedits": "summedits-summedits"}
#: Sources made from a source's rows leave with it.
DERIVED = {"fib": ("d2c_fib",), "summedits": ("d2c_summedits",)}


def _run(cmd: list[str], log: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        subprocess.run(cmd, check=True, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=REPO)


def _figures(run: Path) -> dict:
    metrics = json.loads((run / "metrics.json").read_text())
    return metrics["tasks"]["fact-check"]


def measure(source: str, runs: Path, limit: int, threads: int) -> str:
    out = runs / source
    log = runs / f"{source}.log"
    leave = [a for s in (source, *DERIVED.get(source, ())) for a in ("--leave-out", s)]
    _run([sys.executable, "benchmarks/train_default_judge.py", "--out", str(out), "--no-progress", *leave], log)
    rows = out / "heldout" / f"{HELDOUT[source]}.jsonl"
    cal = {}
    for label, model in (("base", "gemma-3-270m"), ("tuned", str(out / "judge.toml"))):
        cal[label] = runs / f"cal-{source}-{label}"
        _run(["judgelab", "calibrate", "--model", model, "--set", str(rows), "--limit", str(limit), "--out",
              str(cal[label]), "--threads", str(threads), "--no-plots", "--no-progress"], log)
    cmp = subprocess.run(["judgelab", "compare", str(cal["base"]), str(cal["tuned"]), "--task", "fact-check",
                          "--json"], check=True, capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    (runs / f"compare-{source}.json").write_text(cmp.stdout)
    return f"| {source} | {cal['base']} | {cal['tuned']} | see compare-{source}.json |"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=Path, default=Path("runs/loso"))
    p.add_argument("--sources", default=",".join(SOURCES), help="comma-separated, of " + ", ".join(SOURCES))
    p.add_argument("--limit", type=int, default=200, help="held-out rows measured per source")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    args.runs.mkdir(parents=True, exist_ok=True)
    lines = ["| left out | base run | tuned run | paired comparison |", "|---|---|---|---|"]
    for source in args.sources.split(","):
        if source not in SOURCES:
            p.error(f"unknown source {source!r}; choose from {', '.join(SOURCES)}")
        lines.append(measure(source, args.runs, args.limit, args.threads))
        print(lines[-1], flush=True)
    (args.runs / "table.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
