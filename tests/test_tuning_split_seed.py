"""``TuneConfig.split_seed``: a second training seed can hold out the first run's units, so the two adapters pair."""

from __future__ import annotations

from judgelab.calibration import LabelledRow
from judgelab.tuning import Source, TuneConfig, split_sources


def _source(n_documents: int = 30) -> Source:
    rows = tuple(
        LabelledRow(id=f"d{d}-{label}", task="fact-check", documents=[f"Document number {d} says the sky is blue."],
                    response=f"Claim {label} about document {d}.", label=label)
        for d in range(n_documents) for label in (0, 1))
    return Source(name="toy", spec="toy.jsonl", rows=rows, weight=1.0)


def _held_ids(config: TuneConfig) -> set[str]:
    _, held, _ = split_sources([_source()], config)
    return {r.id for r in held["toy"]}


def test_split_seed_holds_out_the_same_units_under_another_training_seed():
    first = _held_ids(TuneConfig(sets=("toy.jsonl",), out="o", heldout=0.3, seed=0))
    assert first and len(first) % 2 == 0  # whole documents: both rows of each
    assert _held_ids(TuneConfig(sets=("toy.jsonl",), out="o", heldout=0.3, seed=1, split_seed=0)) == first
    assert _held_ids(TuneConfig(sets=("toy.jsonl",), out="o", heldout=0.3, seed=1)) != first


def test_split_seed_changes_the_resume_hash_only_when_it_changes_the_split():
    plain = TuneConfig(sets=("a.jsonl",), out="o")
    assert plain.training_hash() == "4a5bb7470f7d60a3"  # the value before split_seed existed: old runs resume
    assert TuneConfig(sets=("a.jsonl",), out="o", split_seed=0).training_hash() == plain.training_hash()
    second = TuneConfig(sets=("a.jsonl",), out="o", seed=1)
    assert TuneConfig(sets=("a.jsonl",), out="o", seed=1, split_seed=0).training_hash() != second.training_hash()
    assert TuneConfig(sets=("a.jsonl",), out="o", seed=1, split_seed=1).training_hash() == second.training_hash()
