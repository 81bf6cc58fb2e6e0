"""Train the adapter of the shipped default judge ``gemma-3-270m-judge`` (one command).

    PYTHONPATH=src python benchmarks/train_default_judge.py --out /work/tune-runs/default

It tunes LoRA weights on the label reading of Gemma 3 270M (the embedded
base, on the transformers backend) with the fact-checking evaluator's own
prompt, from the labelled sets in ``../shared/data`` (``--data``), one
option per source giving its training rows (``SOURCES`` below; balanced per
label): MNLI and FEVER-NLI (DocNLI binary), SNLI, FIB, FactCG, BEGIN,
SummEdits, and deletion pairs made from FIB and SummEdits (``d2c:``).
WiCE, HaluEval QA and FaithBench are held out whole (FaithBench's licence
allows evaluation only). ``--leave-out SOURCE`` holds one more out whole
(``leave_one_source_out.py`` runs one per source); ``--scale`` shrinks every
source's rows alike (a quicker run of the same mix).

Documents are read as they are served: chunks of ``--chunk-tokens`` 400
(written into the tuned spec), a row's probability the best chunk's
(``--long-rows chunk``); prompts up to ``--max-tokens`` 640. The documents of
the quick start's set (``--exclude calibration/starter.jsonl``) are never
trained on. Every source also keeps 10% of its groups (a document's rows,
``meta.pair`` edits) out of training; ``OUT/heldout/*.jsonl`` holds them, for
``judgelab calibrate --set``. The run is seeded and resumable: the same
command continues from the last checkpoint (kill it any time). It writes
``OUT/judge.toml`` (the tuned spec), ``OUT/peft/``, ``OUT/adapter.gguf``,
``OUT/report.md``, ``OUT/loss.png`` and ``OUT/PROVENANCE.json``.

Budget of the shipped run (``--scale 2``, the default: each source's rows in
``SOURCES`` doubled): 1,046,963 training tokens (4,080 rows, one epoch, 510
steps of 8 rows at lr 6e-4), 3,395 s of training (308 tokens/s, float32, two
torch threads) on a 2-core Intel Xeon (AVX-512, AMX) with nothing else running
(autogroups off: docs/measurements.md); 61 minutes wall clock with loading,
rendering and the held-out scoring before and after. ``--scale 1`` is the
previous shipped run and the full-size leave-one-source-out folds. bf16
autocast trains 1.5x faster on this CPU but its adapter scored worse
(docs/tuning.md), so float32 is the default. ``--ship models`` then copies the adapter and
spec into ``models/`` (see docs/tuning.md).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


#: (option name, set spec under --data, default training rows; 0 = held out whole, never trained on)
SOURCES = (
    ("mnli", "mnli:{data}/mnli", 400),
    ("fever", "fever-nli:{data}/fever_nli", 400),
    ("snli", "snli:{data}/snli/esnli_dev.jsonl", 150),
    ("fib", "fib:{data}/fib", 240),
    ("factcg", "factcg:{data}/factcg/CG2C_doc.json", 300),
    ("begin", "begin:{data}/begin", 220),
    ("summedits", "summedits:{data}/summedits", 150),
    ("d2c_fib", "d2c:fib:{data}/fib", 90),
    ("d2c_summedits", "d2c:summedits:{data}/summedits", 90),
    ("wice", "wice:{data}/wice/dev.jsonl", 0),
    ("halueval", "halueval-qa:{data}/halueval/qa_one-turn.jsonl", 0),
    ("faithbench", "faithbench:{data}/faithbench/FaithBench.csv", 0),
)


def sets_and_weights(data: Path, args: argparse.Namespace) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The training sources and their shares of the rows (0 = held out whole); ``--leave-out`` zeroes one."""
    sets, weights = [], []
    for name, spec, _ in SOURCES:
        rows = 0 if name in args.leave_out else round(getattr(args, name) * args.scale)
        sets.append(spec.format(data=data))
        weights.append(float(rows))
    return tuple(sets), tuple(weights)


def parser() -> argparse.ArgumentParser:
    """The command line of this script (``heldout_eval_sets.py`` reads its defaults)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the labelled sets folder")
    p.add_argument("--out", default="runs/tune/default", help="output folder (reruns resume)")
    for name, spec, rows in SOURCES:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, default=rows,
                       help=f"training rows from {spec.split(':')[0]} (default {rows}; 0 = held out whole)")
    p.add_argument("--leave-out", action="append", default=[], metavar="SOURCE",
                   help="hold this source out whole (a leave-one-source-out run); repeatable")
    p.add_argument("--scale", type=float, default=2.0,
                   help="multiply every source's training rows (2, the default: the shipped run; 1: the previous "
                        "shipped run and the full-size leave_one_source_out.py folds; 0.25: a quarter-size run)")
    p.add_argument("--exclude", type=Path, default=REPO / "calibration" / "starter.jsonl",
                   help="documents of this set are never trained on (default: the quick start's set)")
    p.add_argument("--max-tokens", type=int, default=640)
    p.add_argument("--chunk-tokens", type=int, default=400,
                   help="document chunk length for training and for the tuned spec (default 400)")
    p.add_argument("--autocast", choices=("none", "bf16"), default="none")
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-steps", type=int, help="stop the schedule after this many steps (a quick trial)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--heldout-max", type=int, default=16, help="held-out rows per source scored in the report")
    p.add_argument("--name", default="gemma-3-270m-judge")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--ship", type=Path, metavar="MODELS_DIR",
                   help="when finished, copy the adapter and spec into MODELS_DIR (e.g. models)")
    return p


def build_config(args: argparse.Namespace):
    """The ``TuneConfig`` of a run with these arguments."""
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.tuning import TuneConfig

    sets, weights = sets_and_weights(args.data, args)
    return TuneConfig(
        sets=sets, weights=weights, rows=int(sum(weights)), out=args.out, model="gemma-3-270m",
        evaluator="fact-checking", heldout=0.1, heldout_max=args.heldout_max, max_tokens=args.max_tokens,
        long_rows="chunk", chunk_tokens=args.chunk_tokens, autocast=args.autocast, max_steps=args.max_steps,
        exclude=(str(args.exclude),) if args.exclude else (),
        rank=args.rank, alpha=2.0 * args.rank, epochs=args.epochs, lr=args.lr, batch=args.batch, warmup=0.1,
        seed=args.seed, device=args.device, threads=args.threads, checkpoint_every=10,
        progress=not args.no_progress, name=args.name,
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = build_config(args)
    from judgelab.tuning import tune

    result = tune(config)
    print(f"finished={result.finished} steps={result.steps} tokens={result.tokens} "
          f"train_seconds={result.seconds:.0f} spec={result.spec_path}")
    if args.ship and result.finished:
        from judgelab.tuning import ship_adapter

        print(f"shipped: {ship_adapter(result.out, args.ship)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
