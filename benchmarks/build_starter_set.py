"""Build the quick start's labelled set: the hand-written starter rows plus a seeded sample of public rows.

    PYTHONPATH=src python benchmarks/build_starter_set.py --data ../shared/data

The hand-written rows (``calibration/starter_handwritten.jsonl``: 93 fact-check, 60 relevancy) are
kept as they are. Added, from sets in ``../shared/data`` whose text may be redistributed
(``../shared/data/PROVENANCE.md``, "Licences"; attribution in ``calibration/ATTRIBUTION.md``),
fact-check rows whose documents are what users judge:

- BEGIN, the CMU-DoG and Wizard of Wikipedia parts (annotations CC BY 4.0; the knowledge passages are
  Wikipedia text, CC BY-SA 3.0): knowledge passages, each with one attributable and one not
  attributable dialogue response chosen at random. CMU-DoG: every passage that has both (30, about
  175 words) but those holding a "critical response" section, which quotes Rotten Tomatoes (13);
  WoW: 50 passages of about 21 words. 134 rows;
- MNLI and FEVER-NLI, binary (DocNLI; text CC BY-SA 3.0): 76 balanced rows each.

and relevancy rows whose replies are as hard as the ones users judge: SQuAD v1.1 dev (CC BY-SA 4.0,
Wikipedia paragraphs; ``benchmarks/squad_from_explorer.py`` writes the file from the authors'
repository), one question from each of ``SQUAD_PARAGRAPHS`` paragraphs drawn at random, each with its
answer sentence (1) and one reply that does not answer it (0), of the kinds in ``SQUAD_NEGATIVES``
(``judgelab.calibration.import_squad_relevancy``). The SQuAD draw is made after every other draw, with
its own seed, so the fact-check rows and their splits are those of the starter before it.

Dropped, their draws still made so that every other row stays the one earlier starters held (and
with it the split order): FIB's news summaries (until 2026-12-02), and, since 2026-12-07, FactCG
CG2C's 150 claims (its documents are news and web articles), BEGIN TopicalChat's 40 responses
(its knowledge includes Washington Post articles) and the 26 CMU-DoG responses above. That text is
its publishers', which the package may not redistribute.

Every row carries its text's ``licence``; every added row keeps its source id in ``meta.source``.
Units (a passage's responses, one NLI row) are assigned to ``dev`` or ``test`` alternately in a
seeded order; then every group of rows that share text (``judgelab.calibration.overlap_groups``: a
row, document, claim, long sentence or near-duplicate document, directly or through other rows) that
the alternation split across both is moved whole to the split most of its rows were in, so that the
splits share nothing (``tests/test_starter_set.py`` checks it with ``judgelab sets overlap``).
``benchmarks/train_default_judge.py`` passes this file to ``--exclude``, so no training row shares a
row, document, claim, long sentence or near-duplicate document with it.
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
    "begin-cmu": "CC-BY-SA-3.0",  # Wikipedia plot text; the dialogue responses are CC BY 4.0
    "begin-wow": "CC-BY-SA-3.0",  # Wikipedia sentences; the dialogue responses are CC BY 4.0
    "mnli": "CC-BY-SA-3.0",
    "fever-nli": "CC-BY-SA-3.0",
    "squad-relevancy": "CC-BY-SA-4.0",  # SQuAD v1.1 (CC BY-SA 4.0) over Wikipedia paragraphs
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


#: SQuAD dev paragraphs drawn, one question and two replies each; the negative kinds, cycled in this order.
SQUAD_PARAGRAPHS = 240
SQUAD_NEGATIVES = ("different-question", "contradicts-context", "different-question", "contradicts-context",
                   "off-topic")


def _squad_units(rows, rng):
    """``SQUAD_PARAGRAPHS`` units: per drawn paragraph, one question's on-topic reply and one negative of the cycle."""
    by_question = defaultdict(dict)
    for r in rows:
        by_question[(r.meta["pair"], r.meta["question"])][r.meta["kind"]] = r
    by_paragraph = defaultdict(list)
    for (pair, _question), kinds in by_question.items():
        by_paragraph[pair].append(kinds)
    pairs = sorted(by_paragraph)
    units = []
    for i, k in enumerate(rng.choice(len(pairs), size=SQUAD_PARAGRAPHS, replace=False)):
        questions = by_paragraph[pairs[k]]
        wanted = SQUAD_NEGATIVES[i % len(SQUAD_NEGATIVES)]
        kinds = questions[int(rng.integers(len(questions)))]
        negative = kinds.get(wanted) or next(kinds[n] for n in SQUAD_NEGATIVES if n in kinds)
        units.append([kinds["on-topic"], negative])
    return units


def _public_row(row, split):
    """A source row as the starter holds it: id ``qs-`` plus its source id (kept in ``meta.source``), its split,
    its text's licence."""
    data = row.model_dump(exclude_none=True)
    data.update(id=f"qs-{row.id}", split=split, licence=LICENCES[row.group], meta={**row.meta, "source": row.id})
    return type(row)(**data)


def _redistributable(unit):
    """Whether the package may ship this unit's text: not FactCG's or TopicalChat's articles, no review quotes."""
    group = unit[0].group
    if group in ("factcg", "begin-tc"):
        return False
    return not (group == "begin-cmu" and "critical response" in unit[0].documents[0])


def _splits_by_overlap_group(rows):
    """``rows`` with every overlap group in one split: the split most of its rows hold (ties: the first row's)."""
    from judgelab.calibration import overlap_groups

    split_of = {}
    for group in overlap_groups(rows):
        splits = [r.split for r in group]
        split_of.update((r.id, max(dict.fromkeys(splits), key=splits.count)) for r in group)
    moved = sum(1 for r in rows if split_of[r.id] != r.split)
    return [r if split_of[r.id] == r.split else r.model_copy(update={"split": split_of[r.id]}) for r in rows], moved


#: The headline test's rows per group (label 1 and label 0 each): every CMU-DoG test passage's pair, then
#: seeded draws of the longest-document sets, 80 rows in all.
HEADLINE_PER_LABEL = (("begin-cmu", 9), ("fever-nli", 19), ("begin-wow", 12))


def _headline_rows(rows, seed):
    """``tests/data/headline_rows.jsonl``: a balanced subset of the test split's public rows, by ``HEADLINE_PER_LABEL``."""
    rng = np.random.default_rng([seed, 2])
    picked = []
    for group, per_label in HEADLINE_PER_LABEL:
        for label in (1, 0):
            pool = [r for r in rows if r.split == "test" and r.group == group and r.label == label]
            if len(pool) < per_label:
                raise SystemExit(f"headline rows: {group} has {len(pool)} test rows of label {label}, {per_label} wanted")
            picked += [pool[i] for i in sorted(rng.choice(len(pool), size=per_label, replace=False))]
    return sorted(picked, key=lambda r: [x.id for x in rows].index(r.id))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--out", type=Path, default=REPO / "calibration" / "starter.jsonl")
    p.add_argument("--headline-out", type=Path, default=REPO / "tests" / "data" / "headline_rows.jsonl",
                   help="where the headline test's 80 rows go (a subset of the test split)")
    p.add_argument("--squad", type=Path, default=REPO / "runs" / "squad" / "dev-v1.1.json",
                   help="SQuAD v1.1 dev JSON (benchmarks/squad_from_explorer.py writes it)")
    p.add_argument("--seed", type=int, default=2026)
    args = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.calibration import LabelledRow, import_set, load_rows, write_rows

    rng = np.random.default_rng(args.seed)
    hand = [LabelledRow(**{**r.model_dump(exclude_none=True), "licence": HANDWRITTEN_LICENCE})
            for r in load_rows(REPO / "calibration" / "starter_handwritten.jsonl").rows]
    # The FIB draw of the earlier starters is made and dropped, so that the other rows, and the split
    # order, stay those of the starter the earlier adapters were measured on.
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
        if not _redistributable(groups[gi]):  # dropped after the split order is drawn: no other row moves
            continue
        added += [_public_row(r, split) for r in groups[gi]]
    squad = _squad_units(import_set("squad-relevancy", args.squad), np.random.default_rng([args.seed, 3]))
    for rank, gi in enumerate(np.random.default_rng([args.seed, 4]).permutation(len(squad))):
        added += [_public_row(r, "dev" if rank % 2 == 0 else "test") for r in squad[gi]]
    rows, moved = _splits_by_overlap_group(hand + added)
    n = write_rows(rows, args.out)
    pos = sum(r.label for r in added)
    print(f"wrote {n} rows to {args.out}: {len(hand)} hand-written, {len(added)} public "
          f"({pos} label 1, {len(added) - pos} label 0); {moved} row(s) moved to the split of their overlap group")
    n = write_rows(_headline_rows(rows, args.seed), args.headline_out)
    print(f"wrote {n} headline rows to {args.headline_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
