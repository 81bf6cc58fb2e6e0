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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import write_results  # noqa: E402

from judgelab.bench import BenchSpec, bench  # noqa: E402
from judgelab.engine import load_model  # noqa: E402
from judgelab.server import ServerConfig, ServerThread, create_app  # noqa: E402

KEY = "bench-judges"


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
    # set arguments name this machine's data and run folders: the results file keeps what follows them
    write_results(args.results, {"leaderboard": json.loads(result.leaderboard.model_dump_json())},
                  scrub={args.data: "DATA", args.out: "OUT"})
    print((args.out / "leaderboard.md").read_text(encoding="utf-8").split("\n## ")[0])
    print(f"results: {args.results}")
    return 0 if result.complete else 3


if __name__ == "__main__":
    sys.exit(main())
