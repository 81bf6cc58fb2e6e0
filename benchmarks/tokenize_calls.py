"""Tokenizer calls per judgment of ``evaluate_many``'s tokenisation (issue 15, item 2).

Run from the repository root (needs ../shared/data for the HaluEval file)::

    python benchmarks/tokenize_calls.py --data ../shared/data/halueval/qa_one-turn.jsonl --rows 600

It counts calls into the tokenizer library while doing exactly what
``YesNoEvaluator.evaluate_many`` does before its forward passes: build every
request's prompts (``prompts_for``: sizing the chunks) and tokenise them
(``JudgeModel.judge_many``'s first step). The forward pass itself is left out
(it calls no tokenizer, and on a shared 2-core machine it would take most of
an hour for a thousand judgments). Workloads as in ``throughput.py``: W1
(unique documents, ``2 x rows`` judgments) and W2 (20 documents x 10 claims),
plus a chunked workload (documents 8x longer than the chunk size).

It prints the report; ``--out`` also writes it through ``results_file.write_results``,
with this script's command, the commit and whether the tree was dirty, the CPU
model and its instruction-set flags, llama.cpp's system info, the core count and
the library versions. The ``judgelab`` it names is the package folder it imported:
``src/judgelab`` for this checkout's, ``JUDGELAB_ROOT/judgelab`` for one elsewhere;
the folder of ``--data`` is shown as ``HALUEVAL``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402
from throughput import load_halueval, workload_w2  # noqa: E402


def workload_w1_all(rows: list[dict]) -> list[tuple[str, str]]:
    pairs = [(r["knowledge"], a) for r in rows for a in (r["right_answer"], r["hallucinated_answer"])]
    random.Random(0).shuffle(pairs)
    return pairs


def workload_chunked(rows: list[dict], n_docs: int = 10, claims: int = 5) -> list[tuple[str, str]]:
    docs = [" ".join(r["knowledge"] for r in rows[i * 8:(i + 1) * 8]) for i in range(n_docs)]
    return [(d, rows[i * 8 + k]["right_answer"]) for i, d in enumerate(docs) for k in range(claims)]


def count_calls(model, pairs) -> dict:
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    backend = model.backend
    calls = {"n": 0}
    # count calls into the tokenizer library itself (llama.cpp's, or the HF tokenizer's)
    if backend.name == "llama_cpp":
        owner, name = backend._model, "tokenize"
    else:
        owner, name = type(backend._tok), "__call__"
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    setattr(owner, name, counted)
    evaluator = FactCheckingEvaluator(model)
    evaluator.model.resolve_labels(evaluator.labels)  # label tokens: once per model, not per judgment
    model.reset_caches()
    calls["n"] = 0
    t0 = time.perf_counter()
    prompts = [p for d, c in pairs for p in evaluator.prompts_for(EvaluationRequest(user_text=d, response_content=c))]
    for p in prompts:
        model.tokenize(p)
    elapsed = time.perf_counter() - t0
    setattr(owner, name, original)
    return {"requests": len(pairs), "judgments": len(prompts), "tokenizer_calls": calls["n"],
            "calls_per_judgment": round(calls["n"] / len(prompts), 3), "seconds": round(elapsed, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="HaluEval qa_one-turn.jsonl")
    ap.add_argument("--rows", type=int, default=600, help="HaluEval rows for W1 (2 judgments each)")
    ap.add_argument("--backend", default="llama_cpp")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    from judgelab.engine import load_model

    rows = load_halueval(args.data, max(args.rows, 100))
    options = {"device": "cpu", "n_threads": 1} if args.backend == "transformers" else {"n_threads": 1}
    model = load_model("gemma-3-270m", backend=args.backend, **options)
    results = {
        "W1": count_calls(model, workload_w1_all(rows[: args.rows])),
        "W2": count_calls(model, workload_w2(rows)),
        "chunked": count_calls(model, workload_chunked(rows)),
    }
    import judgelab

    package = Path(judgelab.__file__).parent
    report = {"judgelab": str(package), "backend": args.backend, "results": results}
    print(json.dumps(report, indent=2))
    if args.out:
        scrub: dict[str | os.PathLike[str], str] = {args.data.absolute().parent: "HALUEVAL"}
        if not package.resolve().is_relative_to(REPO):
            scrub[package.parent] = "JUDGELAB_ROOT"  # this checkout's src/judgelab needs no label
        write_results(args.out, report, scrub=scrub,
                      argv=script_argv(__file__, argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
