"""What the label head saves: one judgment with and without the full output layer.

Run from the repository root::

    python benchmarks/label_head.py --out benchmarks/results/label_head.json

Two copies of the embedded gemma-3-270m GGUF, ``label_head=True`` (default)
and ``label_head=False``. Each round caches a 150-token prefix in both, then
times one judgment that adds 16 new tokens (a short claim after a cached
document), alternating between the two so that machine load hits both alike.
Prints the median milliseconds of each and the labels' largest logit
difference between them, and writes them to ``--out`` (through
``results_file.write_results``: with this script's command, the commit and
whether the tree was dirty, the CPU model and its instruction-set flags,
llama.cpp's system info, the core count and the library versions).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "label_head.json")
    args = ap.parse_args(argv)

    from judgelab.engine import load_model

    models = {head: load_model("gemma-3-270m", n_threads=args.threads, label_head=head) for head in (True, False)}
    text = (REPO / "README.md").read_text()
    tokens = models[True].tokenize(text)
    prefix, judged = tokens[:150], tokens[:166]
    labels = ("Yes", "No")
    ids = list(models[True].resolve_labels(labels).token_ids)
    times: dict[bool, list[float]] = {True: [], False: []}
    logits = {}
    for model in models.values():
        model.backend.label_logits([prefix], ids)  # first use: the head's one-off check
    for _ in range(args.rounds):
        for head, model in models.items():
            backend = model.backend
            backend.reset_cache()
            backend.label_logits([prefix], ids)  # cache the prefix
            t0 = time.perf_counter()
            logits[head] = backend.label_logits([judged], ids)[0]
            times[head].append(time.perf_counter() - t0)
    head_ms = statistics.median(times[True]) * 1000
    full_ms = statistics.median(times[False]) * 1000
    result = {
        "threads": args.threads,
        "rounds": args.rounds,
        "new_tokens": len(judged) - len(prefix),
        "head_ms_median": head_ms,
        "full_layer_ms_median": full_ms,
        "saved_ms": full_ms - head_ms,
        "max_abs_label_logit_diff": float(abs(logits[True] - logits[False]).max()),
        "label_head_error_at_check": models[True].backend.label_head_error,
    }
    write_results(args.out, result, argv=script_argv(__file__, argv))
    print(f"gemma-3-270m, {args.threads} threads, judgment of {result['new_tokens']} new tokens after a cached prefix")
    print(f"label head: {head_ms:.1f} ms   full output layer: {full_ms:.1f} ms   saved: {full_ms - head_ms:.1f} ms")
    print(f"largest label logit difference: {result['max_abs_label_logit_diff']:.2e}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
