"""Throughput of judgelab's evaluate_many vs the naive path and the hardware ceiling.

Run from the repository root (needs ../shared/data for the HaluEval file)::

    python benchmarks/throughput.py --out benchmarks/results/throughput.json

Workloads (MiniCheck prompt format, embedded gemma-3-270m GGUF, CPU):

- W1: HaluEval QA, the first 100 questions, 200 judgments (right and
  hallucinated answer against the knowledge), shuffled with seed 0.
- W2: 20 HaluEval knowledge paragraphs x 10 claims each (5 of its own
  answers' forms and others' answers as unsupported claims), shuffled:
  many claims per document.

Paths compared, measured in one run on the same machine:

- (a) judgelab: ``FactCheckingEvaluator.for_bespoke_minicheck(model).evaluate_many``,
  with the default engine (bit-identical to scoring each prompt alone) and
  with ``packed=True`` (trie batches; reported as a').
- (b) naive: llama-cpp-python ``Llama.create_completion(prompt, max_tokens=2,
  temperature=0, logit_bias=...)`` per judgment, in the given order, with the
  same n_ctx / threads / batch settings (what an Ollama-style server does),
  and the weights in plain CPU buffers as judgelab loads them (``naive_llama``:
  llama.cpp's default AMX repacking segfaults in llama-cpp-python 0.3.36).
- (c) ceiling: the unique tokens under perfect prefix sharing (the size of the
  token trie of all prompts) divided by the peak prefill rate (tokens/s at
  the best batch size, median of 6 samples taken
  just before and just after the other paths, in this run).

The JSON (``--out``, through ``results_file.write_results``) holds every
workload's figures and the memory peaks, with this script's command, the commit
and whether the tree was dirty, the CPU model and its instruction-set flags,
llama.cpp's system info, the core count and the library versions; the folder
of ``--data`` is shown as ``HALUEVAL``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_halueval(path: Path, n: int) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
            if len(rows) >= n:
                break
    return rows


def workload_w1(rows: list[dict]) -> list[tuple[str, str]]:
    pairs = []
    for r in rows[:100]:
        pairs.append((r["knowledge"], r["right_answer"]))
        pairs.append((r["knowledge"], r["hallucinated_answer"]))
    random.Random(0).shuffle(pairs)
    return pairs


def workload_w2(rows: list[dict]) -> list[tuple[str, str]]:
    pairs = []
    docs = rows[:20]
    for i, r in enumerate(docs):
        claims = [r["right_answer"], r["hallucinated_answer"]]
        others = [o for j, o in enumerate(rows) if j != i]
        k = 0
        while len(claims) < 10:
            o = others[(i * 8 + k) % len(others)]
            claims.append(o["right_answer"] if k % 2 == 0 else o["hallucinated_answer"])
            k += 1
        pairs.extend((r["knowledge"], c) for c in claims)
    random.Random(0).shuffle(pairs)
    return pairs


def trie_size(token_lists: list[list[int]]) -> int:
    """Distinct (prefix) nodes: the tokens a perfect prefix cache must compute."""
    seen: set[tuple[int, ...]] = set()
    for toks in token_lists:
        for i in range(1, len(toks) + 1):
            seen.add(tuple(toks[:i]))
    return len(seen)


def prefill_rates(backend, tokens: list[int], sizes=(32, 64, 128, 256, 512), repeats: int = 3) -> dict:
    """Tokens/s of plain single-sequence prefill at several batch sizes, ``repeats`` samples each."""
    rates: dict[int, list[float]] = {size: [] for size in sizes}
    for _ in range(repeats):
        for size in sizes:
            backend.reset_cache()
            rates[size].append(len(tokens) / backend.time_prefill(tokens, size))
    backend.reset_cache()
    return rates


def peak_rate(samples: dict) -> tuple[float, dict]:
    """The best batch size's median rate (a max over single noisy samples would flatter the ceiling)."""
    medians = {size: statistics.median(rates) for size, rates in samples.items()}
    return max(medians.values()), medians


def check_peak_rss_mb() -> float:
    """Peak RSS of `judgelab check` in a fresh process.

    Read from the child's own /proc/self/status (VmHWM) at exit: the
    rusage of a child forked from this large process would count the pages
    it shared before exec.
    """
    code = (
        "import sys\n"
        "from judgelab.cli import main\n"
        "try:\n    main(['check'])\nexcept SystemExit:\n    pass\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
        "print('VMHWM', int(hwm.split()[1]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    kb = int(next(line.split()[1] for line in out.splitlines() if line.startswith("VMHWM")))
    return kb / 1024


def run_judgelab(evaluator, pairs):
    from judgelab.evaluators import EvaluationRequest

    requests = [EvaluationRequest(user_text=d, response_content=c) for d, c in pairs]
    evaluator.model.reset_caches()  # nothing cached: not the KV cache, not the prompts' tokens
    t0 = time.perf_counter()
    responses = evaluator.evaluate_many(requests)
    elapsed = time.perf_counter() - t0
    return elapsed, [r.score for r in responses]


def run_naive(llm, prompts, yes_no_tokens):
    bias = {t: 100.0 for t in yes_no_tokens}
    llm.reset()
    t0 = time.perf_counter()
    texts = []
    for p in prompts:
        out = llm.create_completion(p, max_tokens=2, temperature=0.0, logit_bias=bias)
        texts.append(out["choices"][0]["text"])
    return time.perf_counter() - t0, texts


def naive_llama(weights: Path, n_ctx: int, threads: int):
    """The naive arm's ``Llama``, with the weights in plain CPU buffers as judgelab's engine loads them.

    llama-cpp-python's default model params put the weights in "extra" buffer types (repacked for
    AMX / AVX-512 on CPUs that have them); on an Intel Xeon with AMX, llama-cpp-python 0.3.36
    segfaults in the first completion with them (tests/test_remote_llama_server.py). judgelab loads
    with ``use_extra_bufts`` off (``LlamaCppConfig.repack_weights=False``), so both arms read the
    same weight layout.
    """
    import llama_cpp.llama_cpp as lib
    from llama_cpp import Llama

    defaults = lib.llama_model_default_params

    def plain_buffers():
        params = defaults()
        params.use_extra_bufts = False
        return params

    lib.llama_model_default_params = plain_buffers
    try:
        return Llama(model_path=str(weights), n_ctx=n_ctx, n_threads=threads, n_batch=512, verbose=False)
    finally:
        lib.llama_model_default_params = defaults


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "halueval" / "qa_one-turn.jsonl")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--workloads", default="W1,W2")
    ap.add_argument("--skip-naive", action="store_true", help="measure (a) and (c) only")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "throughput.json")
    args = ap.parse_args(argv)

    from judgelab.engine import load_model
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator
    from judgelab.weights import resolve_weights

    if not args.data.is_file():
        print(f"HaluEval QA file not found: {args.data} (pass --data)", file=sys.stderr)
        return 2
    rows = load_halueval(args.data, 200)
    workloads = {"W1": workload_w1(rows), "W2": workload_w2(rows)}
    chosen = [w.strip() for w in args.workloads.split(",") if w.strip()]

    model = load_model("gemma-3-270m", n_threads=args.threads)
    evaluator = FactCheckingEvaluator.for_bespoke_minicheck(model)
    packed_model = load_model("gemma-3-270m", n_threads=args.threads, packed=True)
    packed_evaluator = FactCheckingEvaluator.for_bespoke_minicheck(packed_model)
    load_rss = peak_rss_mb()
    llm = None
    if not args.skip_naive:
        llm = naive_llama(resolve_weights(model.spec), model.n_ctx, args.threads)
    yes_no = model.resolve_labels(("Yes", "No")).token_ids

    results = {"threads": args.threads, "model": model.id, "workloads": {}}
    for name in chosen:
        # Measured back to back, so that the machine's load drifts alike over
        # all paths: ceiling rates, (a), (a'), (b), ceiling rates again.
        pairs = workloads[name]
        prompts = [evaluator.prompts_for(EvaluationRequest(user_text=d, response_content=c))[0] for d, c in pairs]
        token_lists = [model.tokenize(p) for p in prompts]
        unique = trie_size(token_lists)
        total = sum(len(t) for t in token_lists)
        sample = [t for toks in token_lists[:8] for t in toks][:1024]
        samples = prefill_rates(model.backend, sample)
        before = model.backend.tokens_evaluated
        elapsed_a, scores_a = run_judgelab(evaluator, pairs)
        decoded = model.backend.tokens_evaluated - before
        elapsed_p, scores_p = run_judgelab(packed_evaluator, pairs)
        w = {}
        if llm is not None:
            elapsed_b, texts = run_naive(llm, prompts, yes_no)
            w.update(b_naive_s=elapsed_b, b_judgments_per_s=len(texts) / elapsed_b,
                     a_over_b=elapsed_b / elapsed_a, packed_over_b=elapsed_b / elapsed_p,
                     naive_label_texts=sorted({t.strip() for t in texts}))
        for size, rates in prefill_rates(model.backend, sample).items():
            samples[size].extend(rates)
        peak, medians = peak_rate(samples)
        ceiling_s = unique / peak
        results["workloads"][name] = {
            "judgments": len(pairs),
            "prompt_tokens_total": total,
            "unique_tokens": unique,
            "tokens_decoded_by_judgelab": decoded,
            "label_head_error": model.backend.label_head_error,
            "prefill_rate_samples": samples,
            "prefill_rates": medians,
            "peak_prefill_tok_s": peak,
            "a_judgelab_s": elapsed_a,
            "a_judgments_per_s": len(pairs) / elapsed_a,
            "c_ceiling_s": ceiling_s,
            "c_judgments_per_s": len(pairs) / ceiling_s,
            "a_over_c": ceiling_s / elapsed_a,
            "packed_s": elapsed_p,
            "packed_judgments_per_s": len(pairs) / elapsed_p,
            "packed_over_c": ceiling_s / elapsed_p,
            "packed_max_abs_score_diff": max(abs(x - y) for x, y in zip(scores_a, scores_p)),
            **w,
        }
    results["rss_after_load_mb"] = load_rss
    results["peak_rss_mb"] = peak_rss_mb()
    results["judgelab_check_peak_rss_mb"] = check_peak_rss_mb()
    results["model_file_mb"] = os.path.getsize(resolve_weights(model.spec)) / 2**20

    write_results(args.out, results, scrub={args.data.absolute().parent: "HALUEVAL"},
                  argv=script_argv(__file__, argv))
    print(f"gemma-3-270m Q4_K_M, llama.cpp CPU, {args.threads} threads; MiniCheck prompt format")
    heads = ["workload", "judgments", "tokens", "unique", "(a) j/s", "(a') j/s", "(b) j/s", "(c) j/s",
             "a/b", "a/c", "a'/b", "a'/c"]
    widths = [9, 10, 8, 8, 9, 10, 9, 9, 7, 7, 7, 7]
    print(heads[0].ljust(widths[0]) + "".join(h.rjust(w) for h, w in zip(heads[1:], widths[1:])))
    nan = float("nan")
    for name, w in results["workloads"].items():
        print(
            f"{name:<9}{w['judgments']:>10}{w['prompt_tokens_total']:>8}{w['unique_tokens']:>8}"
            f"{w['a_judgments_per_s']:>9.2f}{w['packed_judgments_per_s']:>10.2f}"
            f"{w.get('b_judgments_per_s', nan):>9.2f}{w['c_judgments_per_s']:>9.2f}"
            f"{w.get('a_over_b', nan):>7.2f}{w['a_over_c']:>7.2f}{w.get('packed_over_b', nan):>7.2f}{w['packed_over_c']:>7.2f}"
        )
    print("(a) judgelab default (bit-identical), (a') judgelab packed=True, (b) naive Llama.create_completion, (c) ceiling")
    for name, w in results["workloads"].items():
        rates = ", ".join(f"{k}: {v:.0f}" for k, v in w["prefill_rates"].items())
        print(f"{name} prefill rate by batch size (median of 6): {rates} tok/s")
    print(f"peak RSS of this process: {results['peak_rss_mb']:.0f} MB (two judgelab engines"
          + (" and the naive path's model)" if not args.skip_naive else ")"))
    print(f"`judgelab check` peak RSS: {results['judgelab_check_peak_rss_mb']:.0f} MB "
          f"(model file {results['model_file_mb']:.0f} MB; budget file + 400 MB)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
