"""Write the held-out evaluation sets of docs/tuning.md: the rows train_default_judge.py never trained on.

    PYTHONPATH=src python benchmarks/heldout_eval_sets.py --out /work/tune-runs/eval

The split is recomputed from the training config (``judgelab.tuning.heldout_split``: same seed, same
groups), so it needs no finished run. The first rows of each source's held-out groups are written; a
source of weight 0 (``--leave-out``) is held out whole. Each goes to the file name a run gives it
(``OUT/heldout/``: ``fib-fib.jsonl``, ``d2c-fib.jsonl``). Options after ``--`` are ``train_default_judge.py``'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--out", type=Path, default=Path("runs/tune/eval"))
    p.add_argument("--limit", type=int, default=200, help="rows per source (the first whole groups)")
    p.add_argument("train_args", nargs="*", help="train_default_judge.py options after --, e.g. -- --leave-out fib")
    args = p.parse_args()
    sys.path[:0] = [str(REPO / "src"), str(REPO / "benchmarks")]
    import train_default_judge as default

    from judgelab.calibration import write_rows
    from judgelab.tuning import heldout_file_name, heldout_split

    config = default.build_config(default.parser().parse_args(["--data", str(args.data)] + args.train_args))
    for name, rows in heldout_split(config).items():
        dest = args.out / heldout_file_name(name)  # the name a run gives its held-out file: d2c-fib, sent-fib, ...
        n = write_rows(rows[: args.limit], dest)
        print(f"{name}: {n} of {len(rows)} held-out rows -> {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
