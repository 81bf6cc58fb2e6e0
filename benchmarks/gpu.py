"""Judgments/s, computed prompt tokens/s and fraction of bf16 peak, per backend (issue 15, item 7).

Run from the repository root (needs ../shared/data for the HaluEval file)::

    # on a GPU machine (H200: --peak-tflops 989, the default)
    python benchmarks/gpu.py --out benchmarks/results/gpu.json

    # smoke test on CPU: a few judgments, and the 7B-shaped judge scaled down
    python benchmarks/gpu.py --tiny --limit 16 --device cpu --out /tmp/gpu.json

Workloads, MiniCheck prompts (``FactCheckingEvaluator``) on HaluEval QA, built
by ``throughput.py``'s builders:

- W1: 200 shuffled judgments (100 questions x right and hallucinated answer);
- W2: 20 documents x 10 claims (many claims per document);
- W1x5: 1,000 shuffled judgments (500 questions).

Judges:

- gemma-3-270m through each backend that is installed (``llama_cpp``;
  ``transformers`` on ``--device``, bfloat16 on cuda, float32 on cpu);
- a 7B-shaped judge with random weights (``--shape qwen2-7b`` or
  ``internlm2-7b``'s sizes in a Qwen2 config; gemma's tokenizer), through
  the transformers backend only (weights do not matter for speed; llama.cpp
  would need a GGUF of it). ``--tiny`` scales it down to a few layers of width
  64 so that the script runs on a CPU.

Figures: judgments/s; computed tokens/s (tokens the backend actually ran,
``tokens_evaluated``: shared prefixes counted once, padding not counted); and
the fraction of ``--peak-tflops`` that those tokens represent, at
``2 * N + 2 * n_layers * ctx * d_model`` FLOPs per token (``N`` the
non-embedding parameters, ``ctx`` the mean prompt length). Each workload runs
from empty caches. The JSON (``--out``, through ``results_file.write_results``)
has every figure and the settings, with this script's command, the commit and
whether the tree was dirty, the CPU model and its instruction-set flags,
llama.cpp's system info, the core count and the library versions (torch's and
transformers' included); the folder of ``--data`` is shown as ``HALUEVAL``.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import script_argv, write_results  # noqa: E402
from throughput import load_halueval, workload_w1, workload_w2  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
log = logging.getLogger("benchmarks.gpu")

SHAPES = {
    # hidden, intermediate, layers, heads, kv heads
    "qwen2-7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                     num_attention_heads=28, num_key_value_heads=4),
    "internlm2-7b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                         num_attention_heads=32, num_key_value_heads=8),
}
TINY = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def workload_w1x5(rows: list[dict]) -> list[tuple[str, str]]:
    pairs = [(r["knowledge"], a) for r in rows[:500] for a in (r["right_answer"], r["hallucinated_answer"])]
    random.Random(0).shuffle(pairs)
    return pairs


def build_workloads(rows: list[dict], names: list[str], limit: int | None) -> dict[str, list[tuple[str, str]]]:
    builders = {"W1": workload_w1, "W2": workload_w2, "W1x5": workload_w1x5}
    out = {}
    for name in names:
        pairs = builders[name](rows)
        if limit and name == "W2":  # keep several claims per document
            docs = list(dict.fromkeys(d for d, _ in pairs))[: max(1, limit // 10)]
            pairs = [p for p in pairs if p[0] in docs][:limit]
        elif limit:
            pairs = pairs[:limit]
        out[name] = pairs
    return out


def flops_per_token(n_nonembedding: int, n_layers: int, d_model: int, mean_ctx: float) -> float:
    return 2.0 * n_nonembedding + 2.0 * n_layers * mean_ctx * d_model


def model_shape(model) -> tuple[int, int, int]:
    """(non-embedding parameters, layers, width) of a transformers-backend model."""
    hf = model.backend._model
    config = hf.config
    embed = hf.get_input_embeddings().weight.numel()
    out = hf.get_output_embeddings()
    tied = out is None or out.weight.data_ptr() == hf.get_input_embeddings().weight.data_ptr()
    total = sum(p.numel() for p in hf.parameters())
    return total - embed - (0 if tied else out.weight.numel()), config.num_hidden_layers, config.hidden_size


def run_workload(model, pairs, peak_tflops: float | None, shape: tuple[int, int, int] | None) -> dict:
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    evaluator = FactCheckingEvaluator(model)
    requests = [EvaluationRequest(user_text=d, response_content=c) for d, c in pairs]
    model.reset_caches()
    backend = model.backend
    before = backend.tokens_evaluated
    prompt_tokens_before = model.stats["prompt_tokens"]
    sync(model)
    t0 = time.perf_counter()
    responses = evaluator.evaluate_many(requests)
    sync(model)
    elapsed = time.perf_counter() - t0
    computed = backend.tokens_evaluated - before
    prompt_tokens = model.stats["prompt_tokens"] - prompt_tokens_before
    judgments = sum(len(r.metadata.get("chunks", [0])) for r in responses)
    row = {
        "judgments": judgments,
        "seconds": round(elapsed, 3),
        "judgments_per_s": round(judgments / elapsed, 2),
        "prompt_tokens": prompt_tokens,
        "computed_tokens": computed,
        "computed_tokens_per_s": round(computed / elapsed, 1),
    }
    if shape is not None and peak_tflops:
        n, layers, width = shape
        per_token = flops_per_token(n, layers, width, prompt_tokens / max(1, judgments))
        row["fraction_of_peak"] = round(computed * per_token / elapsed / (peak_tflops * 1e12), 4)
    return row


def sync(model) -> None:
    if model.backend.name == "transformers" and model.backend.device_kind == "cuda":
        model.backend._torch.cuda.synchronize()


def random_judge_folder(shape_name: str, tiny: bool, device: str, dtype: str, root: Path) -> Path:
    """A Hugging Face folder with a random-weight Qwen2 model of the given shape and gemma's tokenizer."""
    import torch
    import transformers

    from judgelab.engine._hf_cache import converted_folder
    from judgelab.specs import load_spec
    from judgelab.weights import resolve_weights

    gemma = converted_folder(resolve_weights(load_spec("gemma-3-270m")))
    tokenizer = transformers.AutoTokenizer.from_pretrained(gemma)
    sizes = TINY if tiny else SHAPES[shape_name]
    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer), max_position_embeddings=8192, tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, **sizes,
    )
    folder = root / f"{shape_name}{'-tiny' if tiny else ''}"
    torch.manual_seed(0)
    with torch.device(device if device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    del model
    return folder


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "halueval" / "qa_one-turn.jsonl")
    ap.add_argument("--backends", default="llama_cpp,transformers")
    ap.add_argument("--workloads", default="W1,W2,W1x5")
    ap.add_argument("--device", default="auto", help="transformers device: auto, cuda or cpu")
    ap.add_argument("--dtype", default="auto", help="transformers dtype (auto: bfloat16 on cuda, float32 on cpu)")
    ap.add_argument("--n-gpu-layers", type=int, default=-1, help="llama_cpp layers on the GPU (a CUDA build)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--pack", action="store_true", help="transformers: pack prompts without padding (pack=True)")
    ap.add_argument("--shape", default="qwen2-7b", choices=sorted(SHAPES))
    ap.add_argument("--no-big", action="store_true", help="skip the 7B-shaped judge")
    ap.add_argument("--tiny", action="store_true", help="scale the 7B-shaped judge down (CPU smoke test)")
    ap.add_argument("--limit", type=int, default=None, help="judgments per workload (smoke tests)")
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="bf16 dense peak of the GPU (H200: 989)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "gpu.json")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    from judgelab.engine import load_model
    from judgelab.errors import BackendUnavailableError

    rows = load_halueval(args.data, 500)
    workloads = build_workloads(rows, args.workloads.split(","), args.limit)
    results: dict[str, dict] = {}
    for backend in args.backends.split(","):
        options: dict = {}
        if backend == "llama_cpp":
            options = {"n_gpu_layers": args.n_gpu_layers, **({"n_threads": args.threads} if args.threads else {})}
        else:
            options = {"device": args.device, "dtype": args.dtype, "pack": args.pack,
                       **({"n_threads": args.threads} if args.threads else {})}
        try:
            model = load_model("gemma-3-270m", backend=backend, **options)
        except BackendUnavailableError as exc:
            log.info("%s: not available (%s)", backend, exc)
            results[f"gemma-3-270m/{backend}"] = {"not measured": str(exc)}
            continue
        shape = model_shape(model) if backend == "transformers" else None
        info = model.info()
        key = f"gemma-3-270m/{backend}"
        results[key] = {"device": info.device, "quantization": info.quantization}
        for name, pairs in workloads.items():
            results[key][name] = run_workload(model, pairs, args.peak_tflops, shape)
            log.info("%s %s: %s", key, name, results[key][name])
        model.close()

    if not args.no_big and "transformers" in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            dtype = args.dtype if args.dtype != "auto" else ("float32" if args.device == "cpu" else "bfloat16")
            folder = random_judge_folder(args.shape, args.tiny, args.device, dtype, Path(tmp))
            model = load_model(folder, backend="transformers", device=args.device, dtype=dtype, pack=args.pack,
                               **({"n_threads": args.threads} if args.threads else {}))
            shape = model_shape(model)
            key = f"{args.shape}{'-tiny' if args.tiny else ''}-random/transformers"
            results[key] = {"device": model.info().device, "quantization": model.info().quantization,
                            "non_embedding_params": shape[0]}
            for name, pairs in workloads.items():
                if name == "W1x5":
                    continue  # W1 and W2 are the big judge's comparison (issue 15)
                results[key][name] = run_workload(model, pairs, args.peak_tflops, shape)
                log.info("%s %s: %s", key, name, results[key][name])
            model.close()

    print_table(results)
    report = {
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "results": results,
    }
    written = write_results(args.out, report, scrub={args.data.absolute().parent: "HALUEVAL"},
                            argv=script_argv(__file__, argv))
    print(f"wrote {written}")
    return 0


def print_table(results: dict) -> None:
    header = f"{'judge/backend':<36} {'workload':<6} {'j/s':>9} {'computed tok/s':>15} {'of peak':>8}"
    print(header)
    print("-" * len(header))
    for key, row in results.items():
        for name, figures in row.items():
            if not isinstance(figures, dict):
                continue
            peak = figures.get("fraction_of_peak")
            print(f"{key:<36} {name:<6} {figures['judgments_per_s']:>9.2f} {figures['computed_tokens_per_s']:>15.1f} "
                  f"{'' if peak is None else f'{peak:.1%}':>8}")


if __name__ == "__main__":
    raise SystemExit(main())
