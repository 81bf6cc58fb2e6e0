"""Build the quick start's labelled set: the hand-written starter rows plus a seeded sample of public rows.

    PYTHONPATH=src python benchmarks/build_starter_set.py --data ../shared/data

The hand-written rows (``calibration/starter_handwritten.jsonl``: 93 fact-check, 60 relevancy) are
kept as they are. Added, from sets in ``../shared/data`` whose text may be redistributed
(``../shared/data/PROVENANCE.md``, "Licences"; attribution in ``calibration/ATTRIBUTION.md``),
fact-check rows whose documents are what users judge:

- BEGIN (CMU-DoG and WoW: CC BY 4.0; TopicalChat: CDLA-Sharing-1.0): 100 knowledge passages, each
  with one attributable and one not attributable dialogue response chosen at random: every passage
  of CMU-DoG (30) and TopicalChat (20) that has both (about 175 and 257 words), and 50 of WoW's
  (about 21 words): 200 rows;
- FactCG CG2C (MIT): 75 grounded and 75 ungrounded claims, one row per claim: 150 rows;
- MNLI and FEVER-NLI, binary (DocNLI; text CC BY-SA 3.0): 76 balanced rows each.

(Until 2026-12-02 the first 200 rows were FIB's news summaries; the articles are the publishers'
text, which the package may not redistribute, so they were replaced.) Every row carries its text's
``licence``; every added row keeps its source id in ``meta.source``; rows of one unit (a passage's
responses, a claim and its FactCG twin) stay in one split (``dev`` or ``test``, half the units
each). ``benchmarks/train_default_judge.py`` passes this file to ``--exclude``, so no training row
shares a row, document, claim, long sentence or near-duplicate document with it (``judgelab sets
overlap calibration/starter.jsonl --against ...`` checks that).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _by_document(rows):
    """Rows by their first document's sha256 (the draws of every starter so far were made per document)."""
    by_document = defaultdict(list)
    for r in rows:
        by_document[hashlib.sha256(r.documents[0].encode("utf-8")).hexdigest()[:16]].append(r)
    return by_document


#: The licence of each added group's text (SPDX ids; PROVENANCE.md's "Licences").
LICENCES = {
    "begin-cmu": "CC-BY-4.0",
    "begin-tc": "CDLA-Sharing-1.0",
    "begin-wow": "CC-BY-4.0",
    "factcg": "MIT",
    "mnli": "CC-BY-SA-3.0",
    "fever-nli": "CC-BY-SA-3.0",
}
#: The hand-written rows are the project's own.
HANDWRITTEN_LICENCE = "Apache-2.0"


def _pairs(rows, rng, groups_wanted, per_group):
    """Per group, ``per_group`` units that hold both labels: one row of each label, chosen at random."""
    picked = []
    for corpus in groups_wanted:
        groups = _by_document([r for r in rows if r.group == corpus])
        keys = sorted(k for k, g in groups.items() if {r.label for r in g} == {0, 1})
        for k in rng.choice(keys, size=per_group, replace=False):
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
    hand = [LabelledRow(**{**r.model_dump(exclude_none=True), "licence": HANDWRITTEN_LICENCE})
            for r in load_rows(REPO / "calibration" / "starter_handwritten.jsonl").rows]
    # The FIB draw of the earlier starters is made and dropped, so that the FactCG, MNLI and FEVER-NLI
    # rows, and every row's split, stay those of the starter the earlier adapters were measured on.
    _pairs(import_set("fib", args.data / "fib"), rng, ("fib-xsum", "fib-cnn_dm"), 50)
    begin, begin_rng = import_set("begin", args.data / "begin"), np.random.default_rng([args.seed, 1])
    groups = _pairs(begin, begin_rng, ("begin-cmu",), 30) + _pairs(begin, begin_rng, ("begin-tc",), 20)
    groups += _pairs(begin, begin_rng, ("begin-wow",), 50)
    groups += _balanced_groups(import_set("factcg", args.data / "factcg" / "CG2C_doc.json"), rng, 75)
    groups += _balanced_groups(import_set("mnli", args.data / "mnli"), rng, 38)
    groups += _balanced_groups(import_set("fever-nli", args.data / "fever_nli"), rng, 38)
    order = rng.permutation(len(groups))
    added = []
    for rank, gi in enumerate(order):
        split = "dev" if rank % 2 == 0 else "test"
        for r in groups[gi]:
            data = r.model_dump(exclude_none=True)
            data.update(id=f"qs-{r.id}", split=split, group=r.group, licence=LICENCES[r.group],
                        meta={**r.meta, "source": r.id})
            added.append(LabelledRow(**data))
    n = write_rows(hand + added, args.out)
    pos = sum(r.label for r in added)
    print(f"wrote {n} rows to {args.out}: {len(hand)} hand-written, {len(added)} public "
          f"({pos} label 1, {len(added) - pos} label 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
