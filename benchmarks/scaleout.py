"""Scale-out on Ray: 1 against 2 replicas, the driver's own ceiling, and a projection for N replicas.

Run from the repository root (needs ``pip install 'judgelab[ray]'``)::

    python benchmarks/scaleout.py --limit 48 --out benchmarks/results/scaleout.json

What it measures, on a local Ray cluster on 127.0.0.1 (``--cpus``, default 2):

1. **Real judge.** Fact-check rows (12 short documents x 4 claims, documents
   interleaved; ``--limit`` rows) scored by gemma-3-270m (llama.cpp, one
   thread per replica): in this process (``LocalExecutor``), then on 1 and on 2
   Ray replicas. For each: wall time of ``run()`` (with actor start and model
   load), the steady rate (each replica's rows over its busy seconds, summed),
   the tokens decoded per replica and in all, and whether every score equals
   the local run's bit for bit. On a 2-core machine two replicas can gain
   little: the driver, Ray's own processes and both replicas share the cores.
2. **Driver ceiling.** A no-op evaluator (instant answers) on 2 replicas,
   ``--noop-rows`` rows: rows/s of wall time and rows per second of the
   driver's own CPU time (what one driver core can write), per block size.
3. **Projection.** judgments/s for N replicas = min(N x per-replica rate,
   driver ceiling at the default block size of 32, wall rows/s), for the measured per-replica rate and any
   ``--replica-rate`` given (e.g. a GPU replica's rate from benchmarks/gpu.py);
   the largest N the driver keeps up with is ceiling / rate.

Prints a table and writes JSON (``--out``, through ``results_file.write_results``: this script's
command, the commit and whether the tree was dirty, the CPU model and its instruction-set flags,
llama.cpp's system info, the core count and the library versions, Ray's included) with the load
average at the start and at the end. Timing figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
# the Ray workers this script starts import the same checkout
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)

from judgelab.calibration import EvaluatorFactory, LabelledRow, LocalExecutor, RayExecutor, run  # noqa: E402
from judgelab.evaluators import EvaluationResponse  # noqa: E402

# the documents of benchmarks/backends.py, with its first four claims
sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import CLAIMS as _BACKEND_CLAIMS  # noqa: E402
from backends import DOCS  # noqa: E402
from results_file import script_argv, write_results  # noqa: E402

CLAIMS = _BACKEND_CLAIMS[:4]


def judge_rows(limit: int) -> list[LabelledRow]:
    rows = [
        LabelledRow(id=f"d{d:02d}-c{c}", task="fact-check", documents=[doc], response=claim, label=int(c == 0))
        for c, claim in enumerate(CLAIMS) for d, doc in enumerate(DOCS)
    ]
    return rows[:limit]


class NoopEvaluator:
    """Answers instantly: what is left is the executor's and the driver's own work."""

    def evaluate_many(self, requests):
        return [EvaluationResponse(passed=True, score=0.5, feedback="noop",
                                   metadata={"probabilities": {"Yes": 0.5, "No": 0.5}, "model": "noop"})
                for _ in requests]


class NoopFactory:
    def __call__(self) -> NoopEvaluator:
        return NoopEvaluator()


class TimedRayExecutor(RayExecutor):
    """A ``RayExecutor`` that notes when the first block came back (replicas started and loaded)."""

    def execute(self, *args, **kwargs):
        self.first_block_at = None
        for chunk in super().execute(*args, **kwargs):
            if self.first_block_at is None:
                self.first_block_at = (time.perf_counter(), len(chunk))
            yield chunk


def steady_rate(report) -> float:
    return sum(r.rows / r.seconds for r in report.replicas if r.seconds > 0)


def score(executor, rows, out: Path) -> dict:
    t0 = time.perf_counter()
    recs = run(EvaluatorFactory("gemma-3-270m", "fact-check", model_options={"n_threads": 1}), rows,
               out=out, progress=False, executor=executor)
    wall = time.perf_counter() - t0
    rep = executor.report
    return {
        "rows": len(recs),
        "wall_s": round(wall, 2),
        "wall_rows_per_s": round(len(recs) / wall, 2),
        "steady_rows_per_s": round(steady_rate(rep), 2),
        "tokens_decoded": rep.tokens_decoded,
        "replicas": [{"replica": r.replica, "rows": r.rows, "blocks": r.blocks, "tokens_decoded": r.tokens_decoded,
                      "busy_s": round(r.seconds, 2)} for r in rep.replicas],
        "retried_blocks": rep.retried_blocks,
        "scores": {r.id: r.score for r in recs},
    }


def noop_ceiling(n_rows: int, block_size: int, out: Path) -> dict:
    rows = [LabelledRow(id=f"n{i:06d}", task="fact-check", documents=[f"doc {i % 97}"], response=f"c{i}", label=i % 2)
            for i in range(n_rows)]
    ex = TimedRayExecutor(replicas=2, block_size=block_size)
    cpu0, t0 = time.process_time(), time.perf_counter()
    run(NoopFactory(), rows, out=out, progress=False, executor=ex)
    end, cpu = time.perf_counter(), time.process_time() - cpu0
    first_at, first_rows = ex.first_block_at
    return {"rows": n_rows, "block_size": block_size, "wall_s": round(end - t0, 2),
            "startup_s": round(first_at - t0, 2),
            # after the first block: the replicas are up, what remains is the stream of blocks
            "rows_per_s": round((n_rows - first_rows) / (end - first_at)),
            "driver_cpu_s": round(cpu, 2), "rows_per_driver_cpu_s": round(n_rows / cpu)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=48, help="judge rows (default 48, at most 48)")
    ap.add_argument("--noop-rows", type=int, default=20000, help="rows for the driver ceiling (default 20000)")
    ap.add_argument("--block-size", type=int, default=4, help="rows per block for the judge runs (default 4)")
    ap.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster (default 2)")
    ap.add_argument("--replica-rate", type=float, action="append", default=[],
                    help="also project for replicas of this many judgments/s (repeatable)")
    ap.add_argument("--out", default="benchmarks/results/scaleout.json")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    rows = judge_rows(args.limit)
    ray.init(num_cpus=args.cpus, include_dashboard=False, _node_ip_address="127.0.0.1",
             object_store_memory=200 * 1024**2, log_to_driver=False)
    result: dict = {"load_avg_at_start": os.getloadavg(), "rows": len(rows), "block_size": args.block_size}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            runs = {"local": score(LocalExecutor(), rows, tmp / "local.jsonl")}
            for n in (1, 2):
                runs[f"ray x{n}"] = score(RayExecutor(replicas=n, replica_threads=1, block_size=args.block_size),
                                          rows, tmp / f"ray{n}.jsonl")
            local_scores = runs["local"]["scores"]
            for r in runs.values():
                r["identical_to_local"] = r.pop("scores") == local_scores
            result["judge"] = runs
            result["driver_ceiling"] = [noop_ceiling(args.noop_rows, b, tmp / f"noop{b}.jsonl") for b in (32, 256)]
            result["load_avg_at_end"] = os.getloadavg()
    finally:
        ray.shutdown()

    # the conservative figure: rows/s the whole stream sustained at the default block size, with the
    # no-op replicas and Ray sharing the machine with the driver (rows per driver CPU second is the upper bound)
    ceiling = next(c["rows_per_s"] for c in result["driver_ceiling"] if c["block_size"] == 32)
    rates = {"measured (1 CPU replica)": runs["ray x1"]["steady_rows_per_s"]}
    rates.update({f"given {r:g} j/s": r for r in args.replica_rate})
    result["projection"] = {
        "driver_ceiling_rows_per_s": ceiling,
        "rates": {name: {"per_replica": rate, "max_replicas": math.floor(ceiling / rate) if rate else None,
                         "by_replicas": {n: round(min(n * rate, ceiling), 1) for n in (1, 2, 4, 8, 16, 32, 64, 128)}}
                  for name, rate in rates.items()},
    }

    print(f"{len(rows)} fact-check rows, gemma-3-270m Q4_K_M, llama.cpp, 1 thread per replica, "
          f"{args.cpus}-CPU Ray cluster on 127.0.0.1 (load average at start {result['load_avg_at_start'][0]:.1f})")
    print(f"{'run':<10} {'wall s':>7} {'wall j/s':>9} {'steady j/s':>11} {'tokens decoded (per replica)':>34} {'same scores':>12}")
    for name, r in runs.items():
        per = "+".join(str(x["tokens_decoded"]) for x in r["replicas"])
        print(f"{name:<10} {r['wall_s']:>7.1f} {r['wall_rows_per_s']:>9.2f} {r['steady_rows_per_s']:>11.2f} "
              f"{str(r['tokens_decoded']) + ' (' + per + ')':>34} {str(r['identical_to_local']):>12}")
    print("\ndriver ceiling (no-op evaluator, 2 replicas):")
    for c in result["driver_ceiling"]:
        print(f"  block {c['block_size']:>4}: {c['rows_per_s']:>7} rows/s after start-up ({c['startup_s']} s), "
              f"{c['rows_per_driver_cpu_s']:>7} rows per driver CPU second")
    print(f"\nprojected judgments/s = min(N x per-replica rate, driver ceiling {ceiling} rows/s):")
    ns = (1, 2, 4, 8, 16, 32, 64, 128)
    print(f"{'per-replica rate':<28}" + "".join(f"{'N=' + str(n):>9}" for n in ns) + f"{'max N':>8}")
    for name, p in result["projection"]["rates"].items():
        label = f"{name} ({p['per_replica']:g})"
        print(f"{label:<28}" + "".join(f"{p['by_replicas'][n]:>9g}" for n in ns) + f"{p['max_replicas']:>8}")
    written = write_results(args.out, result, argv=script_argv(__file__, argv))
    print(f"\nwrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
