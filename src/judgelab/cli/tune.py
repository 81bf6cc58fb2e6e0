"""``judgelab tune``: LoRA-tune a judge's label reading on labelled sets; writes an adapter and a spec."""

from __future__ import annotations

import argparse

from judgelab.cli._options import positive_int


def _weights(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _names(text: str) -> tuple[str, ...]:
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    if not names:
        raise argparse.ArgumentTypeError("expected comma-separated module names, e.g. q_proj,v_proj")
    return names


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "tune",
        help="LoRA-tune a judge on labelled sets: adapter (PEFT + GGUF), model spec, report",
        description="Train LoRA weights on a judge's label reading (cross-entropy over the label tokens, "
        "the probability the engine serves), with the evaluators' own prompts. Writes OUT/judge.toml "
        "(use it as --model anywhere), OUT/peft, OUT/adapter.gguf, OUT/report.md. Reruns resume. "
        "Needs pip install 'judgelab[tune]'.",
    )
    p.add_argument("--model", default="gemma-3-270m", help="base model id or spec .toml with a transformers path")
    p.add_argument("--set", dest="sets", action="append", required=True, metavar="FILE|KIND:PATH",
                   help="labelled set (repeatable; each is one source): JSONL or KIND:PATH (snli, summedits, "
                   "wice, faithbench, halueval-qa, ...), or GENERATOR:SET for hard-negative pairs made from SET "
                   "(d2c, num, swap, partial)")
    p.add_argument("--weights", type=_weights, help="one weight per --set, comma-separated (0: held out only)")
    p.add_argument("--evaluator", help="evaluator whose prompts are trained (default: each task's default)")
    p.add_argument("--rows", type=positive_int, help="training rows in all (default: every balanced row)")
    p.add_argument("--heldout", type=float, default=0.1, help="share of each source's units (rows sharing meta.pair) held out (default 0.1)")
    p.add_argument("--heldout-max", type=positive_int, default=100, help="held-out rows per source in the report")
    p.add_argument("--max-tokens", type=positive_int, default=512, help="longest training prompt (default 512)")
    p.add_argument("--long-rows", choices=("skip", "chunk"), default="skip", help="rows over --max-tokens")
    p.add_argument("--chunk-tokens", type=positive_int,
                   help="document chunk length for training rows, written into the tuned spec (default: the base's)")
    p.add_argument("--exclude", action="append", default=[], metavar="SET",
                   help="rows of this set (same id or same document and claim) are never trained on; repeatable")
    p.add_argument("--rank", type=positive_int, default=16)
    p.add_argument("--alpha", type=float, default=32.0)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--target-modules", type=_names, help="comma-separated module names (default: attention + MLP)")
    p.add_argument("--layers", default="top-half", help="top-half (default), top-K, all, or A-B")
    p.add_argument("--adapt-top", type=positive_int, metavar="K",
                   help="LoRA on the top K decoder layers only (the same as --layers top-K): no backward pass "
                   "below them")
    p.add_argument("--init-adapter", metavar="PEFT_DIR",
                   help="start from this PEFT adapter's LoRA weights (e.g. a tuned judge's peft/ folder): continued "
                   "training; its rank, alpha, modules and layers must be this run's")
    p.add_argument("--epochs", type=positive_int, default=1)
    p.add_argument("--max-steps", type=positive_int)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch", type=positive_int, default=8, help="rows per optimizer step")
    p.add_argument("--warmup", type=float, default=0.05, help="share of steps of linear warm-up")
    p.add_argument("--seed", type=int, default=0, help="seeds the sampling, order, initialisation and (unless "
                   "--split-seed) the held-out split (default 0)")
    p.add_argument("--split-seed", type=int, help="seed of the held-out split alone: runs of different --seed and one "
                   "--split-seed hold out the same units, for a paired comparison (default: --seed)")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    p.add_argument("--dtype", default="auto", help="auto (float32 on CPU, bfloat16 on cuda), float32, bfloat16")
    p.add_argument("--autocast", choices=("none", "bf16"), default="none",
                   help="bf16: bfloat16 autocast for the forward/backward passes (fast on AMX / AVX-512 BF16 CPUs)")
    p.add_argument("--cache", choices=("none", "memory"), default="none",
                   help="memory: run the frozen layers below the first adapted one once per prompt and keep their "
                   "output, so later epochs run the adapted layers only (default none)")
    p.add_argument("--cache-mb", type=positive_int, default=2048, help="bound of --cache memory in MiB (default 2048)")
    p.add_argument("--threads", type=positive_int, help="torch CPU threads (1 is fastest on a busy CPU)")
    p.add_argument("--checkpoint-every", type=positive_int, default=50)
    p.add_argument("--stop-after", type=positive_int, help="stop after this many steps (resume by rerunning)")
    p.add_argument("--name", help="id of the tuned spec (default BASE-tuned)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default="runs/tune", help="output folder (default runs/tune); reruns resume")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgelab.errors import ParameterError
    from judgelab.tuning import DEFAULT_TARGET_MODULES, TuneConfig, tune

    if args.adapt_top is not None and args.layers != "top-half":
        raise ParameterError(f"--adapt-top {args.adapt_top} and --layers {args.layers} both choose the adapted "
                             "layers; pass one of them.", name="adapt_top")
    layers = f"top-{args.adapt_top}" if args.adapt_top is not None else args.layers

    config = TuneConfig(
        sets=tuple(args.sets), out=args.out, model=args.model, weights=args.weights, evaluator=args.evaluator,
        rows=args.rows, heldout=args.heldout, heldout_max=args.heldout_max, max_tokens=args.max_tokens,
        long_rows=args.long_rows, chunk_tokens=args.chunk_tokens, exclude=tuple(args.exclude),
        autocast=args.autocast, rank=args.rank, alpha=args.alpha, dropout=args.dropout,
        target_modules=args.target_modules or DEFAULT_TARGET_MODULES, layers=layers, epochs=args.epochs,
        max_steps=args.max_steps, lr=args.lr, batch=args.batch, warmup=args.warmup, seed=args.seed,
        split_seed=args.split_seed,
        cache=args.cache, cache_mb=args.cache_mb,
        device=args.device, dtype=args.dtype, threads=args.threads, checkpoint_every=args.checkpoint_every,
        stop_after=args.stop_after, progress=not args.no_progress, name=args.name, init_adapter=args.init_adapter,
    )
    result = tune(config)
    if not result.finished:
        print(f"stopped at step {result.steps}; rerun the same command to resume ({result.out})")
        return 0
    print(f"tuned judge: {result.spec_path}  ({result.steps} steps, {result.tokens:,} tokens, "
          f"{result.seconds:.0f} s; report {result.out / 'report.md'})")
    for e in result.evaluations:
        o = e.get("overall", {})
        print(f"  held-out {e['label']}: AUROC {o.get('auroc', float('nan')):.3f}, "
              f"balanced accuracy@0.5 {o.get('balanced_accuracy', float('nan')):.3f} on {o.get('n', 0)} rows")
    return 0
