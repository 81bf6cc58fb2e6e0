"""The held-out table of docs/tuning.md: base against tuned judge on rows a tuning run never saw.

    python benchmarks/heldout_table.py --run /work/tune-runs/clean1 --cal /work/tune-runs/cal-clean1 \\
        --results benchmarks/results/tuning/heldout-clean1.json

For each held-out set of the run (``RUN/heldout/*.jsonl``: the sources trained on give their
held-out units, WiCE, HaluEval QA and FaithBench are never trained on), it writes a seeded sample of
whole units, at most ``--rows`` rows (``CAL/sets/SET.jsonl``), scores it with every ``--models``
judge (``judgelab calibrate``, 2 threads, no plots), and compares each judge with the first one on
the same rows (``judgelab compare FIRST OTHER --task fact-check --json``: a paired bootstrap of
whole units). The JSON holds per set and judge calibrate's held-out AUROC and balanced accuracy
with their intervals, and the paired differences, with what ``results_file.write_results`` records
(this script's command, the commit and whether the tree was dirty, the CPU model and its
instruction-set flags, llama.cpp's system info, the core count and the library versions; ``--run``
shown as ``RUN``, ``--cal`` as ``CAL``). Reruns resume (calibrate resumes; finished runs are re-read).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402


def sample_units(rows: list, limit: int, seed: int) -> list:
    """Whole units in a seeded order until ``limit`` rows (the held-out rows of a source, spread)."""
    import numpy as np

    by_unit: dict[str, list] = defaultdict(list)
    for r in rows:
        by_unit[r.unit].append(r)
    keys = sorted(by_unit)
    np.random.default_rng(seed).shuffle(keys)
    picked: list = []
    for k in keys:
        if picked and len(picked) + len(by_unit[k]) > limit:
            continue
        picked.extend(by_unit[k])
        if len(picked) >= limit:
            break
    return picked


def run(cmd: list[str], log: Path) -> None:
    with log.open("w", encoding="utf-8") as fh:
        done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}; see {log}")


def heldout_figures(metrics_path: Path) -> dict[str, Any]:
    task = json.loads(metrics_path.read_text(encoding="utf-8"))["tasks"]["fact-check"]
    return {"heldout": task.get("heldout"), "threshold": task["threshold"]["value"], "rows": task.get("rows")}


def judge_specs(models: list[str], p: argparse.ArgumentParser) -> dict[str, str]:
    """``{name: spec}`` from ``--models``: a registered name stands for itself; ``NAME=SPEC`` names a spec file.

    The name labels the calibrate folders and the results file's keys, so a path needs one.
    """
    judges: dict[str, str] = {}
    for model in models:
        name, _, spec = model.partition("=") if "=" in model else (model, "", model)
        if not name or not spec or "/" in name or name in judges:
            p.error(f"--models {model!r}: give a registered judge name, or NAME=SPEC with a short, unique NAME "
                    "(e.g. scale4=/work/tune-runs/scale4/judge.toml)")
        judges[name] = spec
    return judges


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", type=Path, required=True, help="a finished tuning run (its heldout/ folder)")
    p.add_argument("--cal", type=Path, required=True, help="where the calibrate runs go")
    p.add_argument("--models", nargs="+", default=["gemma-3-270m", "gemma-3-270m-judge"],
                   help="judges, each a registered name or NAME=SPEC (a judge.toml path under a short name); the "
                        "first is the baseline of the paired comparisons")
    p.add_argument("--sets", nargs="*", help="held-out file stems (default: every file in RUN/heldout)")
    p.add_argument("--rows", type=int, default=80)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--results", type=Path, required=True)
    args = p.parse_args(argv)
    judges = judge_specs(args.models, p)
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.calibration import load_rows, write_rows

    stems = args.sets or sorted(f.stem for f in (args.run / "heldout").glob("*.jsonl"))
    (args.cal / "sets").mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"run": str(args.run), "models": args.models, "sets": {}}
    for stem in stems:
        rows = sample_units(list(load_rows(args.run / "heldout" / f"{stem}.jsonl").rows), args.rows, args.seed)
        subset = args.cal / "sets" / f"{stem}.jsonl"
        write_rows(rows, subset)
        entry: dict[str, Any] = {"rows": len(rows), "units": len({r.unit for r in rows}), "judges": {}, "paired": {}}
        for model, spec in judges.items():
            folder = args.cal / f"{model}-{stem}"
            cmd = ["judgelab", "calibrate", "--model", spec, "--set", str(subset), "--out", str(folder),
                   "--threads", "2", "--no-plots", "--no-progress"]
            run(cmd, args.cal / f"{model}-{stem}.log")
            entry["judges"][model] = heldout_figures(folder / "metrics.json")
        first, *others = judges
        base = args.cal / f"{first}-{stem}"
        for model in others:
            cmd = ["judgelab", "compare", str(base), str(args.cal / f"{model}-{stem}"), "--task", "fact-check", "--json"]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            entry["paired"][model] = json.loads(done.stdout)
        out["sets"][stem] = entry
        print(stem, {m: (j["heldout"] or {}).get("auroc") for m, j in entry["judges"].items()}, flush=True)
    written = write_results(args.results, out, scrub={args.run.absolute(): "RUN", args.cal.absolute(): "CAL"},
                            argv=script_argv(__file__, argv))
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
