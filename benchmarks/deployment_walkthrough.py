"""The walk-through of docs/deployment.md, run as written, with what each command printed.

    python benchmarks/deployment_walkthrough.py --work runs/deploy --results benchmarks/results/deployment.json

On HaluEval QA (``--data``): calibrate the default judge on the first 200 rows (written to
``WORK/labelled200.jsonl``), fit a policy at
alpha = delta = 0.1, gate the run against itself and against 40 rows re-scored, and estimate the
share of good answers in 200 unlabelled rows (HaluEval QA rows 201-400 with the labels removed).
Each command's exit code and output (stdout, then stderr without progress bars) go into the JSON
(``results_file.write_results``: this script's command, the commit and whether the tree was dirty, the
CPU model and its instruction-set flags, llama.cpp's system info, the core count and the library
versions; an absolute ``--data`` or ``--work`` shown as ``DATA`` or ``WORK``), so that the page quotes
the file and not a memory of a run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from quick_start import printed  # noqa: E402
from results_file import script_argv, write_results  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--work", type=Path, default=Path("runs/deploy"))
    p.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results" / "deployment.json")
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.calibration import import_set, write_rows

    work = args.work
    if work.exists():  # a fresh walk-through: saved scores of other rows would join the run
        import shutil

        shutil.rmtree(work)
    work.mkdir(parents=True)
    rows = import_set("halueval-qa", args.data / "halueval" / "qa_one-turn.jsonl")
    write_rows(rows[:200], work / "labelled200.jsonl")  # the first 200 rows, as a file: --limit spreads over units
    write_rows(rows[:40], work / "new40.jsonl")
    with (work / "traffic.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows[200:400]:
            d = row.model_dump(mode="json", exclude_none=True)
            d.pop("label")
            fh.write(json.dumps(d) + "\n")
    run = str(work / "halueval200")
    commands = {
        "calibrate": ["judgelab", "calibrate", "--set", str(work / "labelled200.jsonl"), "--threads", "2", "--out", run],
        "policy": ["judgelab", "policy", run, "--alpha", "0.1", "--delta", "0.1"],
        "gate_same": ["judgelab", "gate", run, "--set", f"{run}/scores.jsonl"],
        "gate_new40": ["judgelab", "gate", run, "--set", str(work / "new40.jsonl")],
        "estimate": ["judgelab", "estimate", "--run", run, "--labelled", run, "--unlabelled", str(work / "traffic.jsonl")],
    }
    result: dict[str, Any] = {"steps": {}}
    for name, cmd in commands.items():
        done = subprocess.run(cmd, capture_output=True, text=True)
        text = printed(done.stdout, done.stderr)
        shown = " ".join(cmd).replace(str(args.data), "../shared/data")
        result["steps"][name] = {"command": shown, "exit_code": done.returncode, "output": text}
        print(f"$ {shown}\n{text}\n(exit {done.returncode})\n", flush=True)
    written = write_results(args.results, result,
                            scrub={p: label for p, label in ((args.data, "DATA"), (work, "WORK")) if p.is_absolute()},
                            argv=script_argv(__file__, argv))
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
