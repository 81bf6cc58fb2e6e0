"""What bounds training tokens/s on a CPU: the recipe's floating-point work per token against this CPU's matrix products.

    PYTHONPATH=src python benchmarks/training_flops.py [--tokens-per-row 167.1] [--threads 2]

A tokens/s target is only reachable if the CPU can do the arithmetic. This script counts the
floating-point operations one training token costs in the shipped recipe (LoRA of rank ``--rank`` on
every linear module of the top ``--adapt-top`` of the base's decoder layers; the frozen layers below
run forward only, and autograd stops at the lowest adapted layer), from the base model's config (read
from its GGUF, the embedded ``gemma-3-270m`` by default):

- forward, every layer: 2 FLOPs per weight of its linear modules, plus the attention products
  (scores and the weighted sum: 4 x heads x head dim x the row length, as SDPA computes the whole
  masked square), plus the LoRA products on adapted layers;
- backward, adapted layers only: the gradient to the activations (as much as their forward), and the
  LoRA weights' gradients (2 FLOPs per LoRA weight per token);
- the label head reads two rows of the output matrix: negligible, not counted.

It then times torch's float32 matrix product on this CPU with ``--threads`` threads at the shapes
of one training step (a batch of 8 rows of ``--tokens-per-row`` tokens times each linear module of a
layer), best of ``--repeats``, and reports the ceiling that throughput puts on training: the tokens/s
reached if every FLOP ran at that speed and nothing else took time (no attention kernels, no norms,
no Python), with the FLOP rate needed for ``--target`` tokens/s. A measured tokens/s from a results
file (``--measured FILE:KEY``) is set beside it. Figures from a busy machine are not valid
(docs/measurements.md): it records the load average before and after, with the CPU's bf16 flags,
the autogroup setting and torch's threads. Writes ``benchmarks/results/tuning/training-flops-<cpu>.json``
(``--results``; through ``results_file.write_results``: this script's command, the commit and whether the
tree was dirty, the CPU model and its instruction-set flags, llama.cpp's system info, the core count and
the library versions).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402
from training_speed import cpu_slug, host_setup  # noqa: E402

#: The linear modules of one Gemma/Llama decoder layer: (name, in features, out features) from the config.
MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def layer_shapes(cfg: object) -> dict[str, tuple[int, int]]:
    """(in, out) features of each linear module of one decoder layer."""
    h = cfg.hidden_size  # type: ignore[attr-defined]
    inter = cfg.intermediate_size  # type: ignore[attr-defined]
    heads, kv = cfg.num_attention_heads, cfg.num_key_value_heads  # type: ignore[attr-defined]
    head_dim = getattr(cfg, "head_dim", None) or h // heads
    return {"q_proj": (h, heads * head_dim), "k_proj": (h, kv * head_dim), "v_proj": (h, kv * head_dim),
            "o_proj": (heads * head_dim, h), "gate_proj": (h, inter), "up_proj": (h, inter), "down_proj": (inter, h)}


def flops_per_token(cfg: object, tokens_per_row: float, adapt_top: int, rank: int) -> dict:
    """Training FLOPs per token, split into forward (all layers) and backward (adapted layers)."""
    shapes = layer_shapes(cfg)
    layers = cfg.num_hidden_layers  # type: ignore[attr-defined]
    heads = cfg.num_attention_heads  # type: ignore[attr-defined]
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // heads  # type: ignore[attr-defined]
    linear = 2 * sum(i * o for i, o in shapes.values())
    attention = 4 * heads * head_dim * tokens_per_row
    lora_weights = sum(rank * (i + o) for i, o in shapes.values())
    lora_forward = 2 * lora_weights
    forward = layers * (linear + attention) + adapt_top * lora_forward
    backward = adapt_top * (linear + 2 * attention + lora_forward + 2 * lora_weights)
    return {"forward": forward, "backward": backward, "total": forward + backward,
            "linear_per_layer": linear, "attention_per_layer": attention, "lora_weights_per_layer": lora_weights}


def matmul_gflops(shapes: dict[str, tuple[int, int]], rows: int, threads: int, repeats: int) -> dict:
    """Best-of-``repeats`` float32 GFLOP/s of ``(rows x in) @ (in x out)`` over one layer's modules."""
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    mats = [(torch.randn(rows, i), torch.randn(i, o)) for i, o in shapes.values()]
    work = 2 * rows * sum(i * o for i, o in shapes.values())
    for x, w in mats:  # warm up
        x @ w
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for x, w in mats:
            x @ w
        best = min(best, time.perf_counter() - start)
    return {"rows": rows, "flops_per_pass": work, "best_seconds": best, "gflops": work / best / 1e9}


def read_figure(spec: str) -> float:
    """``FILE:KEY`` (FILE under benchmarks/results/, KEY dotted, list indices as numbers) as a number."""
    path, key = spec.split(":", 1)
    value: object = json.loads((REPO / "benchmarks" / "results" / path).read_text())
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]  # type: ignore[index]
    return float(value)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="gemma-3-270m", help="the base model id or spec file")
    p.add_argument("--tokens-per-row", type=float, default=167.1,
                   help="mean prompt tokens of a training row (tokens / (steps x batch) of a run's PROVENANCE.json)")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--adapt-top", type=int, help="adapted layers (default: the top half)")
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--target", type=float, default=700.0, help="the tokens/s target")
    p.add_argument("--measured", action="append", default=[], metavar="FILE:KEY",
                   help="a measured tokens/s to set beside the ceiling (repeatable)")
    p.add_argument("--results", type=Path)
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    from transformers import AutoConfig

    from judgelab.specs import load_spec
    from judgelab.weights import resolve_weights

    load_before = os.getloadavg()
    gguf = resolve_weights(load_spec(args.model))
    cfg = AutoConfig.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    top = args.adapt_top if args.adapt_top is not None else cfg.num_hidden_layers // 2
    work = flops_per_token(cfg, args.tokens_per_row, top, args.rank)
    gemm = matmul_gflops(layer_shapes(cfg), round(args.batch * args.tokens_per_row), args.threads, args.repeats)
    ceiling = gemm["gflops"] * 1e9 / work["total"]
    measured = {spec: read_figure(spec) for spec in args.measured}
    record = {
        "what": "training FLOPs per token of the recipe against torch's float32 matrix products (training_flops.py)",
        **host_setup(), "load_average_before": load_before, "load_average_after": os.getloadavg(),
        "model": args.model, "layers": cfg.num_hidden_layers, "adapted_layers": top, "rank": args.rank,
        "tokens_per_row": args.tokens_per_row, "batch": args.batch, "threads": args.threads,
        "mflops_per_token": {k: round(v / 1e6, 2) for k, v in work.items()},
        "matmul": {"rows": gemm["rows"], "gflops": round(gemm["gflops"], 1), "best_seconds": round(gemm["best_seconds"], 5)},
        "ceiling_tokens_per_s": round(ceiling, 1),
        "target_tokens_per_s": args.target,
        "gflops_needed_for_target": round(args.target * work["total"] / 1e9, 1),
        "measured_tokens_per_s": measured,
        "measured_share_of_ceiling": {k: round(v / ceiling, 3) for k, v in measured.items()},
    }
    out = args.results or REPO / "benchmarks" / "results" / "tuning" / f"training-flops-{cpu_slug()}.json"
    write_results(out, record, argv=script_argv(__file__, argv))
    print(f"{work['total'] / 1e6:.0f} MFLOP per training token ({work['forward'] / 1e6:.0f} forward, "
          f"{work['backward'] / 1e6:.0f} backward); float32 matmul {gemm['gflops']:.1f} GFLOP/s on {args.threads} threads; "
          f"ceiling {ceiling:.0f} tokens/s; {args.target:.0f} tokens/s needs {record['gflops_needed_for_target']} GFLOP/s")
    for spec, value in measured.items():
        print(f"measured {value:.1f} tokens/s ({spec}): {value / ceiling:.0%} of the ceiling")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
