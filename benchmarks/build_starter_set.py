"""Build the quick start's labelled set: the hand-written starter rows plus a seeded sample of public rows.

    PYTHONPATH=src python benchmarks/build_starter_set.py --data ../shared/data

The hand-written rows (``calibration/starter_handwritten.jsonl``: 93 fact-check, 60 relevancy) are
kept as they are. Added, from permissively licensed sets in ``../shared/data`` (attribution in
``calibration/ATTRIBUTION.md``), fact-check rows whose documents are what users judge:

- FIB (CC BY 4.0): 100 news articles (50 XSum, 50 CNN/DM), each with its consistent summary and one
  of its model-written inconsistent summaries, chosen at random: 200 rows;
- FactCG CG2C (MIT): 75 documents with a grounded claim and 75 with an ungrounded one: 150 rows;
- MNLI and FEVER-NLI, binary (DocNLI, BSD-3-Clause): 75 balanced rows each.

Every added row keeps its source id in ``meta.source``; rows over one document stay in one split
(``dev`` or ``test``, half the documents each). ``benchmarks/train_default_judge.py`` passes this
file to ``--exclude``, so no training run sees these documents.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _by_document(rows):
    by_unit = defaultdict(list)
    for r in rows:
        by_unit[r.unit].append(r)
    return by_unit


def _fib(rows, rng, per_corpus):
    picked = []
    for corpus in ("fib-xsum", "fib-cnn_dm"):
        groups = _by_document([r for r in rows if r.group == corpus])
        keys = sorted(k for k, g in groups.items() if {r.label for r in g} == {0, 1})
        for k in rng.choice(keys, size=per_corpus, replace=False):
            g = groups[k]
            pos = [r for r in g if r.label == 1][0]
            negs = [r for r in g if r.label == 0]
            picked.append([pos, negs[int(rng.integers(len(negs)))]])
    return picked


def _balanced_groups(rows, rng, per_label):
    """Groups of one row each: ``per_label`` rows of each label from distinct documents."""
    groups = _by_document(rows)
    keys = sorted(groups)
    rng.shuffle(keys)
    out, count = [], {0: 0, 1: 0}
    for k in keys:
        row = groups[k][int(rng.integers(len(groups[k])))]
        if count[row.label] < per_label:
            out.append([row])
            count[row.label] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--out", type=Path, default=REPO / "calibration" / "starter.jsonl")
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.calibration import LabelledRow, import_set, load_rows, write_rows

    rng = np.random.default_rng(args.seed)
    hand = list(load_rows(REPO / "calibration" / "starter_handwritten.jsonl").rows)
    groups = _fib(import_set("fib", args.data / "fib"), rng, 50)
    groups += _balanced_groups(import_set("factcg", args.data / "factcg" / "CG2C_doc.json"), rng, 75)
    groups += _balanced_groups(import_set("mnli", args.data / "mnli"), rng, 38)
    groups += _balanced_groups(import_set("fever-nli", args.data / "fever_nli"), rng, 38)
    order = rng.permutation(len(groups))
    added = []
    for rank, gi in enumerate(order):
        split = "dev" if rank % 2 == 0 else "test"
        for r in groups[gi]:
            data = r.model_dump(exclude_none=True)
            data.update(id=f"qs-{r.id}", split=split, group=r.group,
                        meta={**r.meta, "source": r.id})
            added.append(LabelledRow(**data))
    n = write_rows(hand + added, args.out)
    pos = sum(r.label for r in added)
    print(f"wrote {n} rows to {args.out}: {len(hand)} hand-written, {len(added)} public "
          f"({pos} label 1, {len(added) - pos} label 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
