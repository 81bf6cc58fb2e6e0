"""What ``tests/test_headline.py`` measures, kept with the CPU that measured it.

    PYTHONPATH=src python benchmarks/headline_floor.py \\
        --results benchmarks/results/headline/avx512-epyc.json

Scores the headline test's 80 committed rows (``tests/data/headline_rows.jsonl``) exactly as the
test does (the fact-check task's default evaluator, llama.cpp, 2 threads) with each ``--models``
judge, and writes per judge the AUROC over all 80 rows, its 95% interval (1,000 resamples of rows
within each label), the AUROC per group, and the test's floors, with the commit, the CPU and
llama-cpp-python's build. The test's floors are read from the test file, so the file says how far
each judge is from failing on this CPU's build: the figures the test's comment and docs/tuning.md
quote.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402

ROWS = REPO / "tests" / "data" / "headline_rows.jsonl"
TEST = REPO / "tests" / "test_headline.py"


def headline_floors(path: Path = TEST) -> dict[str, float]:
    """The test's module-level ``MIN_HEADLINE_AUROC`` and ``MAX_BASE_AUROC``, read without importing it."""
    floors: dict[str, float] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("MIN_HEADLINE_AUROC", "MAX_BASE_AUROC"):
                    floors[target.id] = float(node.value.value)
    if len(floors) != 2:
        raise SystemExit(f"{path}: expected MIN_HEADLINE_AUROC and MAX_BASE_AUROC as plain numbers, found {floors}")
    return floors


def measure(model_name: str, rows: list, threads: int) -> dict[str, Any]:
    import numpy as np
    from sklearn.metrics import roc_auc_score

    from judgelab.calibration import bootstrap_interval
    from judgelab.engine import load_model
    from judgelab.evaluators import build_evaluator, evaluate_many

    model = load_model(model_name, n_threads=threads)
    try:
        evaluator = build_evaluator(None, model, task="fact-check")
        scores = np.array([r.score for r in evaluate_many(evaluator, [row.to_request() for row in rows])])
    finally:
        model.close()
    labels = np.array([row.label for row in rows])
    groups = np.array([row.group for row in rows])
    by_group = {g: float(roc_auc_score(labels[groups == g], scores[groups == g]))
                for g in sorted(set(groups)) if len(set(labels[groups == g])) == 2}
    return {"auroc": float(roc_auc_score(labels, scores)),
            "interval": bootstrap_interval(roc_auc_score, labels, scores, strata=labels).to_dict(),
            "auroc_by_group": by_group, "rows": len(rows),
            "scores": [round(float(s), 6) for s in scores]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="+",
                   help="registered judges to score (default: the shipped default judge and the base gemma-3-270m, "
                        "as the test does)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--results", type=Path, required=True)
    args = p.parse_args(argv)
    from judgelab.calibration import load_rows
    from judgelab.specs import DEFAULT_MODEL_ID

    models = args.models or [DEFAULT_MODEL_ID, "gemma-3-270m"]
    rows = list(load_rows(ROWS).rows)
    floors = headline_floors()
    out: dict[str, Any] = {"rows_file": str(ROWS.relative_to(REPO)), "floors": floors, "judges": {}}
    for name in models:
        out["judges"][name] = measure(name, rows, args.threads)
        print(f"{name}: AUROC {out['judges'][name]['auroc']:.3f} on {len(rows)} rows", flush=True)
    written = write_results(args.results, out, argv=script_argv(__file__, argv))
    print(f"wrote {written} (floors: shipped judge >= {floors['MIN_HEADLINE_AUROC']}, "
          f"base < {floors['MAX_BASE_AUROC']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
