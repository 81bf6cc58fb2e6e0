"""A real ``judgelab bench``: the tuned default, the base Gemma 3 270M, SmolLM2-135M and the tuned default served
over HTTP (``judgelab serve`` on 127.0.0.1, asked over the OpenAI protocol), on shared sets a shipped figure may come
from (the evaluation-only WiCE and HaluEval QA) and the starter set. Writes the leaderboard into a results file.

    python benchmarks/bench_judges.py --data ../shared/data --out runs/bench-judges \
        --results benchmarks/results/bench/judges-LABEL.json

Rerunning with the same --out resumes the bench (only missing rows are scored).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from judgelab.bench import BenchSpec, bench
from judgelab.engine import load_model
from judgelab.server import ServerConfig, ServerThread, create_app

KEY = "bench-judges"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the shared data folder (wice/, halueval/)")
    ap.add_argument("--out", type=Path, default=Path("runs/bench-judges"))
    ap.add_argument("--limit", type=int, default=80, help="rows per set and task (default 80)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--results", type=Path, required=True)
    args = ap.parse_args()
    served_model = load_model("gemma-3-270m-judge", n_threads=2)
    server = ServerThread(create_app(served_model, ServerConfig(api_key=KEY)), host="127.0.0.1", port=0).start()
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        served = f"openai:{server.url}/v1#gemma-3-270m-judge"
        spec = BenchSpec.checked({
            "judge": [{"model": "gemma-3-270m-judge"}, {"model": "gemma-3-270m"}, {"model": "smollm2-135m"},
                      {"model": served, "name": "gemma-3-270m-judge (served over HTTP)"}],
            "sets": [f"wice:{args.data / 'wice' / 'dev.jsonl'}", f"halueval-qa:{args.data / 'halueval' / 'qa_one-turn.jsonl'}",
                     "starter"],
            "out": str(args.out), "limit": args.limit, "repeats": args.repeats, "repeat_rows": 20,
        })
        result = bench(spec, progress=False, command="python " + " ".join(sys.argv))
    finally:
        server.stop()
        served_model.close()
    board = json.loads(result.leaderboard.model_dump_json())
    # set arguments name this machine's data folder: keep only what follows it
    data_prefix = str(args.data)
    text = json.dumps(board).replace(data_prefix + "/", "DATA/").replace(str(args.out) + "/", "")
    payload = {
        "command": "python benchmarks/bench_judges.py --data DATA --out OUT --limit "
                   f"{args.limit} --repeats {args.repeats} --results {args.results}",
        "commit": _git("rev-parse", "--short", "HEAD"), "dirty": bool(_git("status", "--porcelain")),
        "leaderboard": json.loads(text),
    }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print((args.out / "leaderboard.md").read_text(encoding="utf-8").split("\n## ")[0])
    print(f"results: {args.results}")
    return 0 if result.complete else 3


if __name__ == "__main__":
    sys.exit(main())
