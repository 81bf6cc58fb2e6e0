"""Train the adapter of the shipped default judge ``gemma-3-270m-judge`` (one command).

    PYTHONPATH=src python benchmarks/train_default_judge.py --out /work/tune-runs/default

It tunes LoRA weights on the label reading of Gemma 3 270M (the embedded
base, on the transformers backend) with the fact-checking evaluator's own
prompt, from the labelled sets in ``../shared/data`` (``--data``):

- SNLI (e-SNLI dev): entailment = 1, neutral/contradiction = 0;
- SummEdits, all five domains;
- FaithBench;
- WiCE dev and HaluEval QA: weight 0, held out whole (never trained on;
  WiCE's evidence is longer than ``--max-tokens`` anyway).

Every source also keeps 10% of its groups (a document's rows, ``meta.pair``
edits) out of training; ``OUT/heldout/*.jsonl`` holds them, for
``judgelab calibrate --set``. The run is seeded and resumable: the same
command continues from the last checkpoint. It writes ``OUT/judge.toml``
(the tuned spec), ``OUT/peft/``, ``OUT/adapter.gguf``, ``OUT/report.md``,
``OUT/loss.png`` and ``OUT/PROVENANCE.json``.

Budget: 151,593 training tokens (1,390 rows of at most 384 tokens, one epoch,
174 steps of 8 rows at lr 6e-4): about 38 minutes wall clock from start to written outputs
(35.0 of them training, 72 tokens/s) on a 2-core AMD EPYC shared with other jobs (load
average 10-15), with one torch thread: on a contended CPU two threads ran
several times slower. (A first run at lr 1.5e-4, batch 16 - 87 steps - barely moved the loss,
0.69 -> 0.62; see docs/tuning.md.) ``--ship models`` then copies the adapter and spec into
``models/`` (see docs/tuning.md).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def sets_and_weights(data: Path, args: argparse.Namespace) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The training sources and their shares of the rows (0 = held out whole)."""
    table = [
        (f"snli:{data / 'snli' / 'esnli_dev.jsonl'}", args.snli),
        (f"summedits:{data / 'summedits'}", args.summedits),
        (f"faithbench:{data / 'faithbench' / 'FaithBench.csv'}", args.faithbench),
        (f"wice:{data / 'wice' / 'dev.jsonl'}", 0.0),
        (f"halueval-qa:{data / 'halueval' / 'qa_one-turn.jsonl'}", args.halueval),
    ]
    return tuple(s for s, _ in table), tuple(float(w) for _, w in table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the labelled sets folder")
    p.add_argument("--out", default="runs/tune/default", help="output folder (reruns resume)")
    p.add_argument("--snli", type=int, default=1200, help="SNLI training rows")
    p.add_argument("--summedits", type=int, default=150, help="SummEdits training rows")
    p.add_argument("--faithbench", type=int, default=40, help="FaithBench training rows")
    p.add_argument("--halueval", type=int, default=0, help="HaluEval QA training rows (default 0: unseen)")
    p.add_argument("--max-tokens", type=int, default=384)
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--heldout-max", type=int, default=24, help="held-out rows per source scored in the report")
    p.add_argument("--name", default="gemma-3-270m-judge")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--ship", type=Path, metavar="MODELS_DIR",
                   help="when finished, copy the adapter and spec into MODELS_DIR (e.g. models)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.tuning import TuneConfig, tune

    sets, weights = sets_and_weights(args.data, args)
    config = TuneConfig(
        sets=sets, weights=weights, rows=int(sum(weights)), out=args.out, model="gemma-3-270m",
        evaluator="fact-checking", heldout=0.1, heldout_max=args.heldout_max, max_tokens=args.max_tokens,
        rank=args.rank, alpha=2.0 * args.rank, epochs=args.epochs, lr=args.lr, batch=args.batch, warmup=0.1,
        seed=args.seed, device=args.device, threads=args.threads, checkpoint_every=10,
        progress=not args.no_progress, name=args.name,
    )
    result = tune(config)
    print(f"finished={result.finished} steps={result.steps} tokens={result.tokens} "
          f"train_seconds={result.seconds:.0f} spec={result.spec_path}")
    if args.ship and result.finished:
        from judgelab.tuning import ship_adapter

        print(f"shipped: {ship_adapter(result.out, args.ship)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
