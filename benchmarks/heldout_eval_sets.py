"""Write the held-out evaluation sets of docs/tuning.md: the rows train_default_judge.py never trained on.

    PYTHONPATH=src python benchmarks/heldout_eval_sets.py --out /work/tune-runs/eval

The split is recomputed from the training config (``judgelab.tuning.heldout_split``: same seed, same
groups), so it needs no finished run. The first rows of each source's held-out groups are written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMITS = {"snli": 240, "summedits": 120, "faithbench": 66, "wice": 60, "halueval-qa": 200}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--out", type=Path, default=Path("runs/tune/eval"))
    args = p.parse_args()
    sys.path[:0] = [str(REPO / "src"), str(REPO / "benchmarks")]
    import train_default_judge as default
    from judgelab.calibration import write_rows
    from judgelab.tuning import TuneConfig, heldout_split

    train_args = argparse.Namespace(snli=1200, summedits=150, faithbench=40, halueval=0)
    sets, weights = default.sets_and_weights(args.data, train_args)
    config = TuneConfig(sets=sets, weights=weights, rows=int(sum(weights)), out="unused", heldout=0.1, seed=0)
    for name, rows in heldout_split(config).items():
        kind = name.split(":")[0]
        n = write_rows(rows[: LIMITS[kind]], args.out / f"{kind}.jsonl")
        print(f"{kind}: {n} of {len(rows)} held-out rows -> {args.out / (kind + '.jsonl')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
