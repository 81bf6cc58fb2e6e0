"""Compare the engine's backends on CPU: judgments/s at batch 1 and 32, peak memory.

Run from the repository root::

    python benchmarks/backends.py --out benchmarks/results/backends.json

Each backend is measured in its own subprocess (``--worker BACKEND``), so its
peak resident memory (``ru_maxrss``) is its own: the model, its runtime and
the work, nothing of the other backend.

Workload: fact-check prompts in the embedded gemma-3-270m spec's format
(``FactCheckingEvaluator.prompts_for``), 96 distinct (document, claim) pairs
built from 12 short documents and 8 claims each, 60-110 tokens per prompt.

- batch 1: the first 32 prompts, one ``JudgeModel.judge`` call each, in order;
- batch 32: the other 64 prompts, two ``judge_many`` calls of 32.

Prompts are distinct, so no result is served from a cache; the llama.cpp
backend still reuses the shared instruction prefix between consecutive
prompts (its design), the transformers backend does not. One warm-up
judgment precedes the timings. The transformers backend loads from its
converted-GGUF cache; the first run converts (minutes), and is timed
separately as ``load_s``.

The results file (``--out``, through ``results_file.write_results``) holds the
rows and the load average at the end, with this script's command, the commit
and whether the tree was dirty, the CPU model and its instruction-set flags,
llama.cpp's system info, the core count and the library versions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402

DOCS = [
    "The Eiffel Tower was completed in 1889 and is 330 metres tall.",
    "Water boils at 100 degrees Celsius at sea level and freezes at zero.",
    "Mount Everest, on the border of Nepal and China, is the highest mountain on Earth.",
    "Alice bought three apples and two pears at the Saturday market.",
    "The meeting was moved from Monday to Thursday afternoon at the request of the board.",
    "Python was created by Guido van Rossum and first released in 1991.",
    "The Amazon is the largest rainforest on Earth and spans nine countries.",
    "Marie Curie won Nobel Prizes in both physics and chemistry.",
    "The library opens at nine in the morning and closes at six in the evening on weekdays.",
    "Jupiter is the largest planet in the solar system and has dozens of moons.",
    "The bakery sells sourdough bread, croissants and rye rolls, but no cakes.",
    "The train to the airport leaves every fifteen minutes from platform four.",
]
CLAIMS = [
    "This is stated in the document.",
    "The document says the opposite.",
    "It happened in 1889.",
    "It is the largest of its kind.",
    "The text mentions a market.",
    "Nothing here is about science.",
    "The numbers given are three and two.",
    "It opens in the evening only.",
]


def _prompts(model) -> tuple[list[str], tuple[str, ...]]:
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    ev = FactCheckingEvaluator(model)
    out = []
    for d, doc in enumerate(DOCS):
        for c, claim in enumerate(CLAIMS):
            # interleave so neighbouring prompts do not share a document
            out.append((c * len(DOCS) + d, ev.prompts_for(EvaluationRequest(user_text=doc, response_content=claim))[0]))
    return [p for _, p in sorted(out)], tuple(ev.labels)


def worker(backend: str, threads: int) -> dict:
    """Measure one backend in this process; returns the row as a dict."""
    from judgelab.engine import load_model

    options = {"n_threads": threads}
    if backend == "transformers":
        options.update(device="cpu", dtype="float32", batch_size=32)
    start = time.perf_counter()
    model = load_model("gemma-3-270m", backend=backend, **options)
    load_s = time.perf_counter() - start
    prompts, labels = _prompts(model)
    tokens = [len(model.tokenize(p)) for p in prompts]
    model.judge(DOCS[0] + " Is this true? Yes.", labels)  # warm-up

    start = time.perf_counter()
    for p in prompts[:32]:
        model.judge(p, labels)
    b1 = time.perf_counter() - start

    start = time.perf_counter()
    model.judge_many(prompts[32:64], labels)
    model.judge_many(prompts[64:96], labels)
    b32 = time.perf_counter() - start

    row = {
        "backend": backend,
        "threads": threads,
        "load_s": round(load_s, 2),
        "batch1_judgments_per_s": round(32 / b1, 2),
        "batch32_judgments_per_s": round(64 / b32, 2),
        "prompt_tokens_mean": round(sum(tokens) / len(tokens), 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    model.close()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="llama_cpp,transformers")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for each backend")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "backends.json")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(worker(args.worker, args.threads)))
        return 0

    rows = []
    for backend in args.backends.split(","):
        proc = subprocess.run(
            [sys.executable, __file__, "--worker", backend, "--threads", str(args.threads)],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        if proc.returncode != 0:
            print(f"{backend}: worker failed\n{proc.stderr[-3000:]}", file=sys.stderr)
            return 1
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))

    header = "| backend | threads | judgments/s, batch 1 | judgments/s, batch 32 | peak RSS (MB) | load (s) |"
    print(header)
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['backend']} | {r['threads']} | {r['batch1_judgments_per_s']} | "
            f"{r['batch32_judgments_per_s']} | {r['peak_rss_mb']} | {r['load_s']} |"
        )
    result = {
        "load_average_at_end": os.getloadavg(),
        "workload": "gemma-3-270m, fact-check prompts, 32 single judgments then 2 x judge_many(32)",
        "rows": rows,
    }
    written = write_results(args.out, result, argv=script_argv(__file__, argv))
    print(f"\nwrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
