"""How fast does ``judgelab view`` open a large run? First-page latency on a synthetic 100,000-row run.

Writes a synthetic run through the public writers (a labelled set with ``write_rows``, ``scores.jsonl``
of ``ScoreRecord`` lines, ``metrics.json`` with ``write_metrics``), reads it as ``judgelab view`` does
(``load_view_run``), serves it with uvicorn on 127.0.0.1 and times HTTP requests with httpx: the first
rows page (sorted by disagreement), the same page again, a page sorted by score, a filtered and searched
page, and ``/api/rows``. Each is timed on the wall clock and in CPU seconds of this process (server and
client threads together: a figure that a busy machine does not inflate); the load average at the start
is recorded beside them. Prints a table and writes JSON to benchmarks/results/view_first_page.json
(``--out``; through ``results_file.write_results``: this script's command, the commit and whether the
tree was dirty, the CPU model and its instruction-set flags, llama.cpp's system info, the core count,
the Python and library versions).

    python benchmarks/view_first_page.py              # 100,000 rows
    python benchmarks/view_first_page.py --rows 5000  # a quick look
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from judgelab.calibration import LabelledRow, ScoreRecord, write_metrics, write_rows
from judgelab.view import ViewConfig, ViewServer, create_app, load_view_run

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import script_argv, write_results  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "view_first_page.json"
REQUESTS = {
    "first page (rows page, default sort)": "/",
    "first page again": "/",
    "sorted by raw score, ascending": "/?sort=score:asc",
    "filtered (split, verdict wrong, score 0.6-1) and searched": "/?split=test&verdict=wrong&min_score=0.6&q=north",
    "page 1000 of the JSON API": "/api/rows?page=1000&per_page=50",
}


def write_run(folder: Path, n: int, seed: int = 0) -> Path:
    """A set and a scored run of ``n`` fact-check rows (scores drawn so the judge beats chance)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    scores = np.where(labels == 1, rng.beta(3, 1.5, n), rng.beta(1.5, 3, n))
    rows = [LabelledRow(id=f"r{i:06d}", task="fact-check", documents=[f"Document {i}: the river flows north. " * 8],
                        response=f"Claim {i}: the river flows {'north' if y else 'south'}.", label=int(y),
                        split=("dev", "test")[i % 2], group=("news", "wiki", "dialogue")[i % 3])
            for i, y in enumerate(labels)]
    write_rows(rows, folder / "set.jsonl")
    run = folder / "run"
    run.mkdir()
    with (run / "scores.jsonl").open("w", encoding="utf-8") as fh:
        for r, s in zip(rows, scores):
            rec = ScoreRecord(id=r.id, task=r.task, label=r.label, group=r.group, split=r.split, unit=r.unit,
                              probabilities={"Yes": float(s), "No": float(1 - s)}, score=float(s), raw_score=float(s),
                              passed=bool(s >= 0.5), chunks=[float(s)], model="synthetic")
            fh.write(rec.model_dump_json(by_alias=True, exclude_none=True) + "\n")
    write_metrics({"meta": {"model": "synthetic", "set": str(folder / "set.jsonl"), "rows": n},
                   "tasks": {"fact-check": {"threshold": {"value": 0.5, "strategy": "balanced_accuracy"}}}},
                  run / "metrics.json")
    return run


def measure(n: int, repeats: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="judgelab-view-bench-") as tmp:
        t0 = time.perf_counter()
        run = write_run(Path(tmp), n)
        t_write = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        view = load_view_run(run)
        t_load, c_load = time.perf_counter() - t0, time.process_time() - c0
        server = ViewServer(create_app([view], ViewConfig()), port=0).start()
        timings: dict[str, list[float]] = {}
        cpu_times: dict[str, list[float]] = {}
        try:
            with httpx.Client(base_url=server.url, timeout=120) as client:
                for name, url in REQUESTS.items():
                    times, cpu = [], []
                    for _ in range(1 if name == "first page (rows page, default sort)" else repeats):
                        t0, c0 = time.perf_counter(), time.process_time()
                        resp = client.get(url)
                        times.append(time.perf_counter() - t0)
                        cpu.append(time.process_time() - c0)
                        resp.raise_for_status()
                    timings[name] = times
                    cpu_times[name] = cpu
        finally:
            server.stop()
    return {"rows": n, "write_run_s": round(t_write, 2), "load_run_s": round(t_load, 2),
            "load_run_cpu_s": round(c_load, 2),
            "requests": {k: {"url": REQUESTS[k], "median_s": round(statistics.median(v), 4),
                             "max_s": round(max(v), 4), "median_cpu_s": round(statistics.median(cpu_times[k]), 4),
                             "n": len(v)} for k, v in timings.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5, help="times each request but the first is repeated")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    result = {"benchmark": "view_first_page", "load_average_at_start": load_at_start, **measure(args.rows, args.repeats)}
    print(f"{args.rows} rows: run written in {result['write_run_s']} s, read by load_view_run in {result['load_run_s']} s")
    print(f"{'request':<60}{'median s':>10}{'max s':>10}{'CPU s':>10}")
    for name, r in result["requests"].items():  # type: ignore[union-attr]
        print(f"{name:<60}{r['median_s']:>10.3f}{r['max_s']:>10.3f}{r['median_cpu_s']:>10.3f}")
    written = write_results(args.out, result, argv=script_argv(__file__))
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
