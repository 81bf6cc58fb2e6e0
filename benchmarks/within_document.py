"""Does a judge rank a document's own claims, or only fail to compare scores across documents?

    python benchmarks/within_document.py --set RUNS/eval-fib.jsonl --run RUNS/cal-fib-tuned [--run ...] \\
        --results benchmarks/results/tuning/within-document-fib.json

For each calibrate run of the rows of ``--set``, it reports the pooled AUROC (every supported row
against every unsupported one, as ``calibrate`` does) and the *within-document* AUROC: the same
statistic over the pairs of a supported and an unsupported row that share their documents only.
A judge whose within-document AUROC is well above its pooled one tells a document's supported claim
from its unsupported ones, but its scores are not comparable from one document to the next (a
threshold cannot separate them), which is what a per-document calibration, or training rows that
pair a claim with its edited twin, address. Both with a 95% bootstrap interval over documents.
The results file (``results_file.write_results``) also records this script's command, the commit and
whether the tree was dirty, the CPU model and its instruction-set flags, llama.cpp's system info, the
core count and the library versions; the folder that ``--set`` and the ``--run`` folders share is shown
as ``RUNS``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, shared_folder, write_results  # noqa: E402


def _pair_wins(pos: list[float], neg: list[float]) -> tuple[float, int]:
    """Wins (ties count half) and pairs of every supported score against every unsupported one."""
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float((p > n).sum() + 0.5 * (p == n).sum()), p.size * n.size


def _auroc(docs: list[dict[int, list[float]]], within: bool) -> float:
    if within:
        wins = pairs = 0.0
        for d in docs:
            if d[0] and d[1]:
                w, k = _pair_wins(d[1], d[0])
                wins, pairs = wins + w, pairs + k
        return wins / pairs if pairs else float("nan")
    w, k = _pair_wins([s for d in docs for s in d[1]], [s for d in docs for s in d[0]])
    return w / k if k else float("nan")


def measure(rows: list[dict], scores: dict[str, float], resamples: int, seed: int) -> dict:
    """Pooled and within-document AUROC with document-bootstrap intervals."""
    by_doc: dict[str, dict[int, list[float]]] = defaultdict(lambda: {0: [], 1: []})
    for row in rows:
        if row["id"] in scores:
            by_doc["\n".join(row["documents"])][int(row["label"])].append(scores[row["id"]])
    docs = list(by_doc.values())
    rng = np.random.default_rng(seed)
    out: dict = {"rows": sum(len(d[0]) + len(d[1]) for d in docs), "documents": len(docs),
                 "documents_with_both_labels": sum(1 for d in docs if d[0] and d[1])}
    for name, within in (("pooled_auroc", False), ("within_document_auroc", True)):
        draws = [_auroc([docs[i] for i in rng.integers(0, len(docs), len(docs))], within) for _ in range(resamples)]
        low, high = np.nanpercentile(draws, [2.5, 97.5])
        out[name] = {"value": _auroc(docs, within), "low": float(low), "high": float(high)}
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", type=Path, required=True, help="the labelled rows the runs scored (JSONL)")
    p.add_argument("--run", type=Path, action="append", required=True, help="a calibrate output folder; repeatable")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--results", type=Path, required=True)
    args = p.parse_args()
    rows = [json.loads(line) for line in args.set.read_text(encoding="utf-8").splitlines() if line.strip()]
    runs = {}
    for run in args.run:
        records = [json.loads(line) for line in (run / "scores.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
        scores = {r["id"]: r["score"] for r in records if r.get("score") is not None}
        runs[str(run)] = measure(rows, scores, args.resamples, args.seed)
        m = runs[str(run)]
        print(f"{run}: {m['rows']} rows, {m['documents']} documents; pooled AUROC {m['pooled_auroc']['value']:.3f} "
              f"[{m['pooled_auroc']['low']:.2f}, {m['pooled_auroc']['high']:.2f}], within-document "
              f"{m['within_document_auroc']['value']:.3f} [{m['within_document_auroc']['low']:.2f}, "
              f"{m['within_document_auroc']['high']:.2f}]")
    shared = shared_folder([args.set, *args.run])
    write_results(args.results, {"set": str(args.set), "runs": runs}, scrub={shared: "RUNS"} if shared else None,
                  argv=script_argv(__file__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
