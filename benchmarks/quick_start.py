"""Run the README's main job (``judgelab calibrate``) and keep what it printed and measured.

    python benchmarks/quick_start.py --model gemma-3-270m --out runs/quickstart-base \\
        --results benchmarks/results/quickstart-base.json
    python benchmarks/quick_start.py --compare-with runs/quickstart-doc2    # the README's command, exactly

It runs the command exactly as the README gives it (plus ``--out`` and ``--model`` when passed),
captures what it printed (stdout, then every stderr line that is not a progress bar: warnings
included), and writes one results file (``results_file.write_results``: this script's command, the
commit and whether the tree was dirty, the CPU model and its AVX2 / AVX-512 / AMX flags, llama.cpp's
system info, the library versions) with the job's command (``job``), the printed text, and the
figures the README and docs quote: per task the shipped threshold, balanced accuracy, AUROC and
ECE with their intervals, and AUROC per group; and the job's wall time (``job_seconds``, with the
score records it resumed instead of scoring and the load average when it started).
``--compare-with RUN`` adds ``judgelab compare RUN OUT --task fact-check --json`` (paired, the
same rows). ``tests/test_published_figures.py`` holds README and docs to these files.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402

_PROGRESS = re.compile(r"\d+%\||\r|it/s\]|s/it\]")


def llama_cpp_build() -> dict[str, str] | None:
    """llama-cpp-python's version and the CPU features its build uses (``llama_print_system_info``).

    Scores depend on them in their last digits: the same commit printed a different threshold and
    calibrator on another AMD EPYC (``benchmarks/results/quickstart-other-epyc.json``).
    """
    try:
        import llama_cpp
    except ImportError:
        return None
    info = llama_cpp.llama_print_system_info()
    return {"version": llama_cpp.__version__,
            "system_info": (info.decode() if isinstance(info, bytes) else str(info)).strip()}


def printed(stdout: str, stderr: str) -> str:
    """What a person sees once the progress bars are gone: stdout, then stderr's other lines."""
    kept = [ln for ln in stderr.splitlines() if ln.strip() and not _PROGRESS.search(ln)]
    return stdout.rstrip("\n") + ("\n" + "\n".join(kept) if kept else "")


#: The parts of each task's metrics.json entry that README and docs quote.
QUOTED = ("threshold", "headline", "rows", "heldout", "heldout_by_group", "calibration", "calibrator", "agreement",
          "warnings")


def figures(metrics: dict[str, Any]) -> dict[str, Any]:
    """Per task: the quoted parts of metrics.json (``tasks.TASK.heldout.auroc.estimate``, ...)."""
    return {task: {k: t[k] for k in QUOTED if t.get(k) is not None} for task, t in metrics.get("tasks", {}).items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs/calibrate", help="the run folder (reruns resume); the default is the "
                   "command's own, so that the README's command runs exactly as written")
    p.add_argument("--model", help="a model id other than the default")
    p.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results" / "quickstart.json")
    p.add_argument("--compare-with", metavar="RUN", help="a run on the same set to compare with (paired)")
    args = p.parse_args(argv)
    command = ["judgelab", "calibrate"] + (["--model", args.model] if args.model else [])
    command += ["--out", args.out] if args.out != "runs/calibrate" else []
    scores = Path(args.out) / "scores.jsonl"
    resumed = sum(1 for _ in scores.open(encoding="utf-8")) if scores.is_file() else 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    text = printed(done.stdout, done.stderr)
    print(text)
    result: dict[str, Any] = {"job": " ".join(command), "exit_code": done.returncode, "output": text,
                              # the job's wall time means something only when it scored every row itself
                              "job_seconds": round(seconds, 1), "records_resumed": resumed,
                              "load_average_at_start": load}
    metrics_path = Path(args.out) / "metrics.json"
    if metrics_path.is_file():
        result["tasks"] = figures(json.loads(metrics_path.read_text(encoding="utf-8")))
    if args.compare_with:
        cmp = ["judgelab", "compare", args.compare_with, args.out, "--task", "fact-check", "--json"]
        c = subprocess.run(cmp, capture_output=True, text=True, check=True)
        result["compare"] = {"command": " ".join(cmp), "a": args.compare_with, "b": args.out, **json.loads(c.stdout)}
    print(f"wrote {write_results(args.results, result, argv=script_argv(__file__, argv))}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
