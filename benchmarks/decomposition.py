"""Sentence-level decomposition against whole claims: the same rows, the same judge, paired.

    PYTHONPATH=src python benchmarks/decomposition.py --model /work/tune-runs/default/judge.toml \\
        --set /work/tune-runs/default/heldout/fib-fib.jsonl --set /work/tune-runs/eval/factcg-CG2C_doc.jsonl \\
        --name tuned-clean2 [--limit 80] [--runs runs/decomposition]

For each ``--set`` (any ``--set`` of ``judgelab calibrate``: a held-out file a training run wrote, a
leave-one-source-out ``eval-S.jsonl``, ``KIND:PATH``), it scores the set's fact-check rows twice with
``--model`` (a tuned spec or a model id such as the base ``gemma-3-270m``; llama.cpp, as users score):

1. ``judgelab calibrate --evaluator fact-checking`` (the whole claim against each document chunk,
   the best chunk's score);
2. ``judgelab calibrate --evaluator fact-checking-sentences`` (each claim sentence against its best
   windows, the weakest sentence's score);

then ``judgelab compare WHOLE SENTENCES --task fact-check --json``: sentences minus whole claims,
paired by resampling unit. ``--limit`` takes the same whole units in both runs (``calibrate``'s
seeded spread). Every step resumes from its run folder under ``--runs/NAME``. It prints one markdown
row per set and writes ``benchmarks/results/decomposition/NAME.json`` (``results_file.write_results``:
this script's command, the commit and whether the tree was dirty, the CPU model and its instruction-set
flags, llama.cpp's system info, the core count and the library versions; ``--runs`` shown as ``RUNS``,
the folder the model spec and the sets share as ``INPUTS``) with each step's command, each run's held-out
AUROC and balanced accuracy (95% intervals), its wall seconds (the cost of the extra prompts), the paired
differences and the documents' mean length in words (decomposition is meant for long documents).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, shared_folder, write_results  # noqa: E402

#: (short name, registered evaluator) of the two ways of scoring a claim.
WAYS = (("whole", "fact-checking"), ("sentences", "fact-checking-sentences"))
FIGURES = ("auroc", "balanced_accuracy")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


def _judgelab(args: list[str], log: Path) -> tuple[str, float]:
    """Run ``python -m judgelab.cli ARGS`` (this checkout's code), appending its output to ``log``; (stdout, seconds)."""
    cmd = [sys.executable, "-m", "judgelab.cli", *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    seconds = time.perf_counter() - start
    with log.open("a", encoding="utf-8") as fh:
        fh.write("$ judgelab " + " ".join(args) + "\n" + done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"decomposition.py: 'judgelab {' '.join(args)}' failed (exit {done.returncode}); "
                         f"its output is in {log}:\n{done.stderr[-2000:]}")
    return done.stdout, seconds


def _set_name(spec: str) -> str:
    return Path(spec.rsplit(":", 1)[-1]).stem or "set"


def _inputs_folder(model: str, sets: list[str]) -> Path | None:
    """The folder the absolute paths of the model spec and the sets share (None without one, or at ``/``)."""
    return shared_folder([model, *(s.rsplit(":", 1)[-1] for s in sets)])


def _figures(run: Path) -> dict[str, Any]:
    """The run's held-out AUROC and balanced accuracy (estimate, low, high), threshold and row counts."""
    task = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["tasks"]["fact-check"]
    return {**{k: task["heldout"][k] for k in FIGURES}, "threshold": task.get("threshold"), "rows": task.get("rows")}


def _mean_words(spec: str, limit: int | None, seed: int) -> float:
    """Mean document length in words over the rows ``calibrate`` scores (the same selection)."""
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.calibration.data import resolve_set, rows_by_task

    rows, _, _ = resolve_set(spec)
    scored = rows_by_task(rows, task="fact-check", limit=limit, seed=seed).get("fact-check", [])
    words = [len(" ".join(r.documents or [r.user_text]).split()) for r in scored]
    return round(sum(words) / len(words), 1) if words else 0.0


def measure(spec: str, args: argparse.Namespace, runs: Path) -> dict[str, Any]:
    """Both calibrations of one set, and their paired comparison."""
    name = _set_name(spec)
    log = runs / f"{name}.log"
    out: dict[str, Any] = {"set": spec, "name": name, "mean_document_words": _mean_words(spec, args.limit, args.seed)}
    folders = {}
    for way, evaluator in WAYS:
        folders[way] = runs / f"{name}-{way}"
        command = ["calibrate", "--model", args.model, "--set", spec, "--task", "fact-check", "--evaluator", evaluator,
                   "--out", str(folders[way]), "--seed", str(args.seed), "--no-plots", "--no-progress"]
        command += ["--threads", str(args.threads)] if args.threads else []
        command += ["--limit", str(args.limit)] if args.limit else []
        _, seconds = _judgelab(command, log)
        out[way] = {"evaluator": evaluator, "command": "judgelab " + " ".join(command), "wall_seconds": round(seconds, 1),
                    **_figures(folders[way])}
    compare = ["compare", str(folders["whole"]), str(folders["sentences"]), "--task", "fact-check", "--json"]
    stdout, _ = _judgelab(compare, log)
    paired = json.loads(stdout)
    out["paired"] = {"command": "judgelab " + " ".join(compare), "b_minus_a": "sentences minus whole",
                     **{k: paired["difference_b_minus_a"][k] for k in FIGURES},
                     "groups": paired["resampling"]["groups"], "warnings": paired.get("warnings", [])}
    return out


def _cell(f: dict) -> str:
    return f"{f['estimate']:.3f} [{f['low']:.2f}, {f['high']:.2f}]"


def _diff(f: dict) -> str:
    return f"{f['estimate']:+.3f} [{f['low']:+.3f}, {f['high']:+.3f}]"


HEADER = ["| set | doc words | whole AUROC | sentences AUROC | paired dAUROC | paired dBA | units | s whole / sentences |",
          "|---|---|---|---|---|---|---|---|"]


def table_row(r: dict) -> str:
    """One markdown row: a set's two AUROCs and the paired differences (sentences minus whole)."""
    return (f"| {r['name']} | {r['mean_document_words']:.0f} | {_cell(r['whole']['auroc'])} | "
            f"{_cell(r['sentences']['auroc'])} | {_diff(r['paired']['auroc'])} | "
            f"{_diff(r['paired']['balanced_accuracy'])} | {r['paired']['groups']} | "
            f"{r['whole']['wall_seconds']:.0f} / {r['sentences']['wall_seconds']:.0f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="a model id (gemma-3-270m) or a tuned spec (OUT/judge.toml)")
    p.add_argument("--set", dest="sets", action="append", required=True, metavar="SET",
                   help="an evaluation set (any --set of calibrate); repeatable")
    p.add_argument("--name", required=True, help="names the results file and the runs folder")
    p.add_argument("--limit", type=int, help="fact-check rows per set (whole units, calibrate's --limit)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=Path, default=Path("runs/decomposition"), help="run folders (reruns resume)")
    p.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results" / "decomposition",
                   help="folder of the results file NAME.json")
    args = p.parse_args(argv)
    runs = args.runs / args.name
    runs.mkdir(parents=True, exist_ok=True)
    rows = []
    print("\n".join(HEADER), flush=True)
    for spec in args.sets:
        rows.append(measure(spec, args, runs))
        print(table_row(rows[-1]), flush=True)
    result = {"model": args.model, "limit": args.limit, "seed": args.seed, "threads": args.threads,
              "sets": rows, "table": [*HEADER, *map(table_row, rows)]}
    scrub: dict[str | os.PathLike[str], str] = {args.runs.absolute(): "RUNS"}
    inputs = _inputs_folder(args.model, args.sets)
    if inputs is not None:
        scrub[inputs] = "INPUTS"
    path = write_results(args.results / f"{args.name}.json", result, scrub=scrub,
                         argv=script_argv(__file__, argv))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
