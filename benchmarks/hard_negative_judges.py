"""How judges score the hard negatives of sources they never trained on: AUROC, pair win rate, claim-only baseline.

    PYTHONPATH=src python benchmarks/hard_negative_judges.py --runs /work/tune-runs/hardneg [--pairs 40]

For each source the shipped recipe holds out whole (``train_default_judge.py``'s ``SOURCES`` with 0
rows: WiCE, HaluEval QA, FaithBench) and each generator (``num:``, ``swap:``, ``partial:``;
docs/generators.md), it draws up to ``--pairs`` pairs (whole ``meta.pair`` units, a seeded sample)
and writes them to ``RUNS/GEN-SOURCE.jsonl``. On those rows it reports:

- the claim-only and length baselines (``shortcut_baselines``, the function behind ``judgelab sets
  shortcuts``; 0.5 = the label does not show without the document), where there are enough units;
- for each judge (``--judges``: the base ``gemma-3-270m`` and the shipped ``gemma-3-270m-judge``),
  scored by ``judgelab calibrate`` on llama.cpp as users score (each run resumes from its scores):
  AUROC of the raw scores over all rows, with a 95% bootstrap interval that resamples whole units,
  and the **pair win rate**, the share of pairs whose supported twin scores above its edited twin
  (ties count half), with its interval; and the wall seconds of the run;
- ``judgelab compare`` of the last judge minus the first (paired by unit).

These rows are generated from sets the judges never trained on (FaithBench's licence allows
evaluation only; nothing here trains). It writes ``--out`` (default
``benchmarks/results/generators/judges.json``; ``results_file.write_results``: this script's command,
the commit and whether the tree was dirty, the CPU model and its instruction-set flags, llama.cpp's
system info, the core count and the library versions; ``--runs`` shown as ``RUNS``, the folder the
judges' spec files share as ``JUDGES``) with the load average before and after, after every cell, so a
stopped run keeps what it measured.
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

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, shared_folder, write_results  # noqa: E402
from train_default_judge import SOURCES  # noqa: E402

GENERATORS = ("num", "swap", "partial")
JUDGES = ("gemma-3-270m", "gemma-3-270m-judge")


def heldout_sources(data: Path) -> list[tuple[str, str]]:
    """(short name, set spec) of every source ``train_default_judge.py`` holds out whole (0 training rows)."""
    return [(name, s.format(data=data)) for name, s, rows in SOURCES if rows == 0]


def sample_units(rows: list, max_units: int, seed: int = 0) -> list:
    """At most ``max_units`` whole units (``LabelledRow.unit``), a seeded sample, in row order."""
    units = sorted({r.unit for r in rows})
    if len(units) <= max_units:
        return rows
    chosen = {units[i] for i in np.random.default_rng(seed).choice(len(units), size=max_units, replace=False)}
    return [r for r in rows if r.unit in chosen]


def twins(ids: list[str]) -> list[tuple[int, int]]:
    """(kept, edited) row indices of every pair whose two rows were both scored (ids ``GEN-PARENT-kept|edited``)."""
    index = {row_id: i for i, row_id in enumerate(ids)}
    return [(i, index[row_id[: -len("kept")] + "edited"]) for row_id, i in index.items()
            if row_id.endswith("-kept") and row_id[: -len("kept")] + "edited" in index]


def judge_figures(scores_path: Path, resamples: int) -> dict:
    """AUROC over all rows and the pair win rate, each with a unit-resampled 95% interval."""
    from sklearn.metrics import roc_auc_score

    from judgelab.calibration import bootstrap_many, read_scores

    records = [r for r in read_scores(scores_path) if r.ok and r.raw_score is not None]
    labels = np.array([r.label for r in records], dtype=float)
    scores = np.array([r.raw_score for r in records], dtype=float)
    units = [r.unit for r in records]
    pairs = twins([r.id for r in records])
    kept_of = np.full(len(records), -1)
    for kept, edited in pairs:
        kept_of[edited] = kept

    def statistic(y: np.ndarray, s: np.ndarray, kept: np.ndarray, own: np.ndarray) -> dict[str, float]:
        # a resample holds copies of rows; a pair counts when its edited row's twin is resampled with it
        position = {int(o): i for i, o in enumerate(own)}
        wins = [1.0 if s[position[int(k)]] > s[i] else 0.5 if s[position[int(k)]] == s[i] else 0.0
                for i, k in enumerate(kept) if k >= 0 and int(k) in position]
        out = {"pair_win_rate": float(np.mean(wins)) if wins else float("nan")}
        out["auroc"] = float(roc_auc_score(y, s)) if len(set(y.tolist())) == 2 else float("nan")
        return out

    own = np.arange(len(records))
    point = statistic(labels, scores, kept_of, own)
    intervals = bootstrap_many(statistic, [labels, scores, kept_of, own], n_resamples=resamples, units=units)
    seconds = sum(r.seconds or 0.0 for r in records)
    return {"rows": len(records), "pairs": len(pairs),
            **{k: {"estimate": round(point[k], 4), "low": round(intervals[k].low, 4), "high": round(intervals[k].high, 4)}
               for k in ("auroc", "pair_win_rate")},
            "scoring_seconds": round(seconds, 1)}


def judges_folder(judges: list[str]) -> Path | None:
    """The folder the absolute spec files among ``judges`` share (None without one, or at ``/``): labelled, so
    that two specs named ``judge.toml`` keep apart in the results file."""
    return shared_folder(judges)


def _slug(judge: str) -> str:
    """A folder-name part for a judge: its model id, or a spec file's last three path parts (``RUN/fold/judge``)."""
    return "-".join(Path(judge).with_suffix("").parts[-3:]) if judge.endswith(".toml") else judge


def measure_cell(rows_path: Path, rows: list, runs: Path, cell: str, args: argparse.Namespace) -> dict:
    from judgelab.calibration import shortcut_baselines
    from judgelab.errors import DataError

    out: dict = {"rows": len(rows), "pairs": len(rows) // 2, "units": len({r.unit for r in rows}),
                 "edits": {}, "mean_document_words": round(float(np.mean(
                     [sum(len(d.split()) for d in r.documents) for r in rows])), 1) if rows else None}
    for r in rows:
        if r.label == 0:
            kind = str(r.meta.get("edit", r.meta.get("generator", "")))
            out["edits"][kind] = out["edits"].get(kind, 0) + 1
    try:
        report = shortcut_baselines(rows, n_resamples=args.resamples)
        out["claim_only"] = {"auroc": round(report.claim_only.estimate, 3), "low": round(report.claim_only.low, 3),
                             "high": round(report.claim_only.high, 3)}
        out["claim_length"] = {"auroc": round(report.claim_length.estimate, 3)}
    except DataError as exc:
        out["shortcuts_skipped"] = str(exc)
    out["judges"] = {}
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    cal_dirs = []
    for judge in args.judges:
        cal = runs / f"cal-{cell}-{_slug(judge)}"
        cal_dirs.append(cal)
        start = time.perf_counter()
        with (runs / f"{cell}.log").open("a") as log:
            subprocess.run(["judgelab", "calibrate", "--model", judge, "--set", str(rows_path), "--out", str(cal),
                            "--threads", str(args.threads), "--no-plots", "--no-progress"],
                           check=True, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        figures = judge_figures(cal / "scores.jsonl", args.resamples)
        figures["wall_seconds_this_call"] = round(time.perf_counter() - start, 1)
        out["judges"][judge] = figures
        print(f"  {cell} {judge}: AUROC {figures['auroc']['estimate']:.3f} "
              f"[{figures['auroc']['low']:.2f}, {figures['auroc']['high']:.2f}], pair win rate "
              f"{figures['pair_win_rate']['estimate']:.3f}", flush=True)
    if len(cal_dirs) >= 2:
        cmp = subprocess.run(["judgelab", "compare", str(cal_dirs[0]), str(cal_dirs[-1]), "--task", "fact-check",
                              "--json"], check=True, capture_output=True, text=True, cwd=REPO, env=env)
        (runs / f"compare-{cell}.json").write_text(cmp.stdout)
        diff = json.loads(cmp.stdout)["difference_b_minus_a"]
        out["paired_last_minus_first"] = {k: diff[k] for k in ("auroc", "balanced_accuracy")}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=Path, required=True, help="folder for the generated rows and the calibration runs")
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--sources", help="comma-separated short names (default: every source held out whole)")
    p.add_argument("--generators", default=",".join(GENERATORS))
    p.add_argument("--pairs", type=int, default=40, help="units (pairs) per generator and source, a seeded sample")
    p.add_argument("--judges", nargs="+", default=list(JUDGES), help="model ids or spec files; compared last minus first")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "generators" / "judges.json")
    args = p.parse_args(argv)
    slugs = [_slug(j) for j in args.judges]
    if len(set(slugs)) < len(slugs):
        p.error(f"--judges {' '.join(args.judges)}: two judges would share a run folder ({', '.join(slugs)}); "
                "give spec files whose last three path parts differ")
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.calibration import resolve_set, write_rows

    args.runs.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"loadavg_before": os.getloadavg(), "pairs_per_cell": args.pairs, "judges": args.judges, "cells": {}}
    scrub: dict[str | os.PathLike[str], str] = {args.runs.absolute(): "RUNS"}
    shared = judges_folder(args.judges)
    if shared is not None:
        scrub[shared] = "JUDGES"
    command = script_argv(__file__, argv)
    sources = dict(heldout_sources(args.data))
    for source in args.sources.split(",") if args.sources else sources:
        for gen in args.generators.split(","):
            cell = f"{gen}-{source}"
            rows_path = args.runs / f"{cell}.jsonl"
            if not rows_path.exists():
                rows, _, _ = resolve_set(f"{gen}:{sources[source]}")
                write_rows(sample_units(rows, args.pairs), rows_path)
            rows, _, _ = resolve_set(str(rows_path))
            if len({r.unit for r in rows}) < 2:
                result["cells"][cell] = {"rows": len(rows), "skipped": "fewer than two pairs"}
                print(f"{cell}: {len(rows) // 2} pairs, skipped", flush=True)
            else:
                print(f"{cell}: {len(rows) // 2} pairs", flush=True)
                result["cells"][cell] = measure_cell(rows_path, rows, args.runs, cell, args)
            result["loadavg_after"] = os.getloadavg()
            write_results(args.out, result, scrub=scrub, argv=command)  # after every cell: a stopped run keeps it
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
