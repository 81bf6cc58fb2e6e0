"""The training draw keeps a pair generator's twins together.

``num:``, ``swap:`` and ``partial:`` write a supported twin and its edited claim into the
parent's unit. Drawing a source's negatives and positives independently trained edited claims
without the claims they were edited from (docs/tuning.md, "Why FIB stays low"); such sources are
now drawn in whole units, and every other source keeps its row-by-row draw.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from judgelab.calibration import GENERATORS, LabelledRow
from judgelab.tuning import PAIRED_KINDS, Example, Source, TuneConfig, balance_examples, is_paired_source

DOCS = [
    "The bridge opened in 1932 and carries 12 lanes of traffic.",
    "The library holds 40,000 books and opened on 3 May 1998.",
    "The team scored 27 points in the final, winning by 6.",
    "The factory employs 350 people and was built in 1961.",
    "The island has 4 villages and a population of 2,300.",
    "The marathon record is 2 hours and 35 minutes, set in 2011.",
]


def _parents() -> list[LabelledRow]:
    return [LabelledRow(id=f"d{i}", task="fact-check", documents=[doc], response=doc, label=1)
            for i, doc in enumerate(DOCS)]


def _example(row: LabelledRow, source: str) -> Example:
    return Example(row.id, source, int(row.label), ((1, 2, 3),), ("Yes", "No"), row.unit)


def _pair_examples(n_units: int, pairs_per_unit: int = 1, source: str = "num:toy") -> list[Example]:
    """Synthetic generator output: each unit holds twins (label 1) and edits (label 0)."""
    out = []
    for u in range(n_units):
        for p in range(pairs_per_unit):
            out.append(Example(f"u{u}-p{p}-twin", source, 1, ((1,),), ("Yes", "No"), f"u{u}"))
            out.append(Example(f"u{u}-p{p}-edit", source, 0, ((1,),), ("Yes", "No"), f"u{u}"))
    return out


def _draw(examples: dict[str, list[Example]], specs: dict[str, str], rows: int | None,
          seed: int = 0) -> tuple[list[Example], dict[str, dict[str, int]]]:
    sources = [Source(name, spec, (), 1.0) for name, spec in specs.items()]
    config = TuneConfig(sets=tuple(specs.values()), out="unused", rows=rows, seed=seed)
    counts: dict[str, dict[str, int]] = {name: {} for name in specs}
    return balance_examples(examples, sources, config, counts), counts


def test_generator_pairs_share_their_parent_unit():
    pairs = GENERATORS["num"](_parents())
    assert pairs, "the number generator made no pair from rows full of figures"
    by_parent = defaultdict(list)
    for row in pairs:
        by_parent[row.meta["parent"]].append(row)
    for parent, rows in by_parent.items():
        assert sorted(r.label for r in rows) == [0, 1]
        assert {r.unit for r in rows} == {parent}
        assert {_example(r, "num:toy").unit for r in rows} == {parent}


def test_example_without_a_unit_is_a_unit_of_its_own():
    assert Example("r1", "s", 1, ((1,),), ("Yes", "No")).unit == "r1"


@pytest.mark.parametrize("spec, paired", [("num:fever.jsonl", True), ("swap:factcg", True),
                                          ("partial:begin", True), ("num:d2c:fib", True),
                                          ("d2c:fib", False), ("sent:fib", False), ("fever.jsonl", False),
                                          ("C:/data/fever.jsonl", False)])
def test_which_sources_are_paired(spec, paired):
    assert is_paired_source(spec) is paired
    assert set(PAIRED_KINDS) == {"num", "swap", "partial"}


@pytest.mark.parametrize("rows", [None, 10, 36])
def test_a_paired_source_trains_every_edit_beside_its_twin(rows):
    examples = _pair_examples(30, pairs_per_unit=2)
    picked, counts = _draw({"num:toy": examples}, {"num:toy": "num:toy"}, rows)
    by_unit = defaultdict(Counter)
    for x in picked:
        by_unit[x.unit][x.label] += 1
    assert all(c[0] == c[1] for c in by_unit.values())
    labels = Counter(x.label for x in picked)
    assert labels[0] == labels[1] == (30 * 2 if rows is None else rows // 2)
    assert counts["num:toy"]["trained"] == len(picked)
    twins = {x.row_id.replace("-twin", "") for x in picked if x.label == 1}
    assert {x.row_id.replace("-edit", "") for x in picked if x.label == 0} == twins


def test_a_unit_with_one_label_left_is_not_drawn():
    examples = _pair_examples(6)
    lone = [x for x in examples if not (x.unit == "u3" and x.label == 1)]  # u3's twin skipped as too long
    picked, _ = _draw({"num:toy": lone}, {"num:toy": "num:toy"}, None)
    assert "u3" not in {x.unit for x in picked}
    assert len(picked) == 10


def test_whole_unit_draw_depends_on_the_seed():
    examples = _pair_examples(40)
    first = {x.row_id for x in _draw({"num:toy": examples}, {"num:toy": "num:toy"}, 10, seed=1)[0]}
    again = {x.row_id for x in _draw({"num:toy": examples}, {"num:toy": "num:toy"}, 10, seed=1)[0]}
    other = {x.row_id for x in _draw({"num:toy": examples}, {"num:toy": "num:toy"}, 10, seed=2)[0]}
    assert first == again
    assert first != other


def test_other_sources_keep_their_row_by_row_draw():
    """A source that is not a pair generator draws what it drew before units were read: the same rows
    for the same seed, whatever the units say."""
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 60)
    plain = [Example(f"r{i}", "fever", int(y), ((1,),), ("Yes", "No")) for i, y in enumerate(labels)]
    grouped = [Example(x.row_id, x.source, x.label, x.prompts, x.labels, f"doc{i // 5}") for i, x in enumerate(plain)]
    a, _ = _draw({"fever": plain}, {"fever": "fever.jsonl"}, 20)
    b, _ = _draw({"fever": grouped}, {"fever": "fever.jsonl"}, 20)
    assert [x.row_id for x in a] == [x.row_id for x in b]
    # The row-by-row draw does split units: some drawn negatives come without a positive of their unit.
    by_unit = defaultdict(Counter)
    for x in b:
        by_unit[x.unit][x.label] += 1
    assert any(c[0] != c[1] for c in by_unit.values())


def test_training_hash_marks_only_runs_with_a_paired_source():
    """A checkpoint of a run without generated pairs resumes as before (its hash is unchanged, pinned
    from the commit before the whole-unit draw); one with a pair source does not resume under the new draw."""
    assert TuneConfig(sets=("fever.jsonl",), out="o", rows=100).training_hash() == "14b1fdea4c7100f0"
    assert TuneConfig(sets=("num:fever.jsonl", "fever.jsonl"), out="o", rows=100).training_hash() != "0f9994c59c055df9"
