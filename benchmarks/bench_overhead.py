"""The bench's own overhead: the same cells scored by ``judgelab bench`` and by one ``calibrate`` per cell.

Each side starts from empty folders and scores the same rows with the same judges (one judge loaded at a time on
both sides); the ratio of wall times, bench over calibrate, is the overhead (1.05 = 5%). Both sides run in this
process, one after the other, on a quiet machine (docs/measurements.md).

    python benchmarks/bench_overhead.py --limit 60 --results benchmarks/results/bench/overhead-LABEL.json
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import write_results  # noqa: E402

from judgelab.bench import BenchSpec, bench  # noqa: E402
from judgelab.calibration import CalibrationOptions, calibrate  # noqa: E402

JUDGES = ("gemma-3-270m-judge", "gemma-3-270m")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=60, help="rows per task of the starter set (default 60)")
    ap.add_argument("--results", type=Path, required=True)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="judgelab-bench-overhead-"))
    try:
        t0 = time.perf_counter()
        for judge in JUDGES:
            calibrate(judge, None, work / "calibrate" / judge,
                      options=CalibrationOptions(limit=args.limit, progress=False, figures=False))
        calibrate_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = bench(BenchSpec.of(JUDGES, ["starter"], out=str(work / "bench"), limit=args.limit), progress=False)
        bench_s = time.perf_counter() - t0
        scoring_s = sum(c.scoring_seconds for c in result.leaderboard.costs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = {
        "judges": list(JUDGES), "set": "starter", "limit": args.limit,
        "judgments": sum(c.judgments for c in result.leaderboard.costs),
        "calibrate_seconds": round(calibrate_s, 3), "bench_seconds": round(bench_s, 3),
        "bench_scoring_seconds": round(scoring_s, 3),
        "bench_over_calibrate": round(bench_s / calibrate_s, 4),
        "bench_overhead_over_scoring": round((bench_s - scoring_s) / scoring_s, 4),
    }
    path = write_results(args.results, figures)
    print(path.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
