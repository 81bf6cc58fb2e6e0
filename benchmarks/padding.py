"""Padding the transformers backend's length buckets would run, with and without the 1/8 cap.

Run from the repository root (needs ../shared/data for the HaluEval file)::

    python benchmarks/padding.py --data ../shared/data/halueval/qa_one-turn.jsonl

Tokenises the W1x5 workload (1,000 MiniCheck prompts, ``gpu.py``) with the
embedded GGUF's tokenizer and cuts it into buckets with the backend's
``_buckets`` under its automatic CPU and CUDA budgets, without a forward pass:
every prompt bucketed on its own (no prefix sharing), as the worst case.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu import workload_w1x5  # noqa: E402
from throughput import load_halueval  # noqa: E402


class _Budget:
    """The two budget fields ``_buckets`` reads."""

    def __init__(self, rows: int, tokens: int) -> None:
        self._max_rows, self._max_tokens = rows, tokens


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True)
    args = ap.parse_args(argv)

    import judgelab.engine._transformers_backend as tb
    from judgelab.engine import load_model
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    model = load_model("gemma-3-270m", n_threads=1)
    evaluator = FactCheckingEvaluator(model)
    pairs = workload_w1x5(load_halueval(args.data, 500))
    tokens = [model.tokenize(p) for d, c in pairs
              for p in evaluator.prompts_for(EvaluationRequest(user_text=d, response_content=c))]
    real = sum(len(t) for t in tokens)
    cap = tb._MAX_PADDING
    print(f"{len(tokens)} prompts, {real} tokens")
    for device in ("cpu", "cuda"):
        for label, limit in (("no cap", float("inf")), (f"cap {cap:g}", cap)):
            tb._MAX_PADDING = limit
            budget = _Budget(tb._AUTO_MAX_ROWS[device], tb._AUTO_TOKENS[device])
            buckets = tb.TransformersBackend._buckets(budget, tokens)
            padded = sum(len(b) * max(len(tokens[i]) for i in b) for b in buckets)
            print(f"{device:<5} {label:<10} batches {len(buckets):>4}  padding {(padded - real) / padded:.3f} of run tokens")
        tb._MAX_PADDING = cap
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
