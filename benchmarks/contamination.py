"""The contamination check on the shared pool: what it finds, and how long it takes.

    python benchmarks/contamination.py --eval OLD_STARTER.jsonl --name starter-before
    python benchmarks/contamination.py --eval calibration/starter.jsonl --name starter-raw-pool
    python benchmarks/contamination.py --eval-sample 1000 --name timing-1000

Reads every set of ``--data`` that the shipped recipe reads (``train_default_judge.py``'s
``SOURCES``, under their short names there: the raw sets, before any exclusion, and the ``d2c:`` pools built from them), or with
``--all`` every set there, and runs ``overlap_report`` (the function behind ``judgelab sets
overlap``) for the evaluation rows: ``--eval`` a set, or ``--eval-sample N`` a seeded sample of N
rows of the pool itself (the heaviest case: every row overlaps). It writes
``benchmarks/results/contamination/NAME.json`` (``results_file.write_results``: the command, the commit
and whether the tree was dirty, the CPU model and its instruction-set flags, llama.cpp's system info, the
core count and the library versions; ``--data`` shown as ``DATA``) with the load average, the seconds to
read the pool and to check it, and the report (counts by kind and by set, first pairs).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402


def recipe_sets(data: Path, everything: bool) -> list[tuple[str, str]]:
    """(short name, set spec) of every set the shipped recipe reads (and with ``everything``, the rest)."""
    spec = importlib.util.spec_from_file_location("train_default_judge", REPO / "benchmarks" / "train_default_judge.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sets = [(name, spec.format(data=data)) for name, spec, _ in module.SOURCES]
    if everything:
        sets += [("snli_test", f"snli:{data}/snli/esnli_test.jsonl"), ("summedits_all", f"summedits:{data}/summedits"),
                 ("halueval_general", f"halueval-general:{data}/halueval/general.jsonl")]
    return sets


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--eval", help="the evaluation set (any --set of calibrate)")
    p.add_argument("--eval-sample", type=int, help="check a seeded sample of N rows of the pool itself")
    p.add_argument("--all", action="store_true", help="every set in --data, not only the recipe's")
    p.add_argument("--name", required=True)
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "contamination")
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    import numpy as np

    from judgelab.calibration import overlap_report, resolve_set

    start = time.perf_counter()
    named = recipe_sets(args.data, args.all)
    pool = [(name, resolve_set(spec)[0]) for name, spec in named]
    read_s = time.perf_counter() - start
    if args.eval_sample:
        everything = [r for _, rows in pool for r in rows]
        pick = np.random.default_rng(0).choice(len(everything), size=args.eval_sample, replace=False)
        evaluation, desc = [everything[i] for i in sorted(pick)], f"{args.eval_sample} rows sampled from the pool"
    else:
        evaluation, desc, _ = resolve_set(args.eval)
    start = time.perf_counter()
    report = overlap_report(evaluation, pool, evaluation_name=desc)
    check_s = time.perf_counter() - start
    result = {
        "loadavg_before": os.getloadavg(),
        "pool": {name: spec.replace(str(args.data), "DATA") for name, spec in named},
        "pool_rows": sum(len(rows) for _, rows in pool), "read_seconds": round(read_s, 1),
        "check_seconds": round(check_s, 1), **report.to_json(),
    }
    path = write_results(args.out / f"{args.name}.json", result, scrub={args.data.absolute(): "DATA"},
                         argv=script_argv(__file__, argv))
    print(f"{desc}: {report.n_contaminated} of {report.n_rows} rows overlap {result['pool_rows']} pool rows; "
          f"by kind {report.contaminated}; read {read_s:.1f} s, checked in {check_s:.1f} s -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
