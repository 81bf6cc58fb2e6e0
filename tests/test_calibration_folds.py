"""Cross-validation folds keep rows of one unit (``meta["pair"]``, ``LabelledRow.unit``) together (no model)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from judgelab.calibration import LabelledRow, ScoreRecord, analyze, import_halueval_qa, read_scores, run
from judgelab.calibration.analysis import split_plan, unit_folds


def _pairs(n_pairs=60, n_single=20, seed=0):
    """HaluEval-like rows: a right (1) and a wrong (0) answer per question, plus unpaired rows."""
    rng = np.random.default_rng(seed)
    rows, scores = [], {}
    for i in range(n_pairs):
        base = float(rng.uniform(0.2, 0.8))  # pair-specific level: the twin is the best hint
        for label in (1, 0):
            rid = f"q{i}-{'right' if label else 'wrong'}"
            rows.append(LabelledRow(id=rid, task="fact-check", documents=[f"k{i}"], response=rid,
                                    label=label, meta={"pair": f"q{i}"}))
            scores[rid] = float(np.clip(base + (0.05 if label else -0.05), 0.01, 0.99))
    for j in range(n_single):
        label = j % 2
        rid = f"s{j}"
        rows.append(LabelledRow(id=rid, task="fact-check", documents=["d"], response=rid, label=label))
        scores[rid] = float(np.clip(rng.normal(0.4 + 0.2 * label, 0.1), 0.01, 0.99))
    return rows, scores


def _fold_of(folds, n):
    fold = np.full(n, -1)
    for k, idx in enumerate(folds):
        assert (fold[idx] == -1).all(), "a row is in two folds"
        fold[idx] = k
    assert (fold >= 0).all(), "a row is in no fold"
    return fold


def _split_units(folds, units):
    fold = _fold_of(folds, len(units))
    by_unit: dict[str, set[int]] = {}
    for u, f in zip(units, fold):
        by_unit.setdefault(u, set()).add(int(f))
    return sorted(u for u, fs in by_unit.items() if len(fs) > 1)


def test_row_unit_is_pair_else_id():
    a = LabelledRow(id="a", task="fact-check", response="x", label=1, meta={"pair": 7})
    b = LabelledRow(id="b", task="fact-check", response="x", label=1)
    c = LabelledRow(id="c", task="fact-check", response="x", label=1, meta={"pair": ""})
    assert (a.unit, b.unit, c.unit) == ("7", "b", "c")


def test_folds_never_split_a_pair_where_plain_stratified_folds_do():
    rows, _ = _pairs()
    y = np.array([r.label for r in rows])
    units = np.array([r.unit for r in rows])
    # the data can show leakage: label-stratified folds that ignore units split pairs
    plain = [test for _, test in StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), y)]
    assert _split_units(plain, units)
    for seed in (0, 1, 2, None):
        folds = unit_folds(y, units, 5, seed)
        assert folds is not None and len(folds) == 5
        assert _split_units(folds, units) == []
        for idx in folds:  # still stratified: every held-out fold has both labels
            assert set(y[idx]) == {0, 1}


def test_singleton_units_give_the_same_folds_as_before():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 50)
    ids = np.array([f"r{i}" for i in range(50)])
    plain = [test for _, test in StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(50), y)]
    got = unit_folds(y, ids, 5, 0)
    assert [list(f) for f in got] == [list(f) for f in plain]


def test_too_few_units_fall_back_to_in_sample_or_fewer_folds():
    y = np.array([1, 0, 1, 0, 1, 0])
    # three pairs: at most three folds, none splits a pair
    folds = unit_folds(y, np.array(["a", "a", "b", "b", "c", "c"]), 5, 0)
    assert folds is not None and len(folds) == 3 and _split_units(folds, list("aabbcc")) == []
    # one pair holding every positive: no held-out fold can test a positive
    assert unit_folds(y, np.array(["a", "b", "a", "c", "a", "d"]), 5, 0) is None
    # analyze says so instead of cross-validating
    recs = [ScoreRecord(id=f"r{i}", task="fact-check", label=int(v), score=0.3 + 0.4 * v, unit="p")
            for i, v in enumerate(y)]
    assert analyze(recs, n_resamples=50).metrics.threshold.mode == "in-sample"


def test_run_records_units_and_analyze_keeps_pairs_together(tmp_path, scripted_evaluator):
    rows, scores = _pairs()
    recs = run(scripted_evaluator(scores), rows, out=tmp_path / "s.jsonl", progress=False)
    saved = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert {s["id"]: s["fold_group"] for s in saved} == {r.id: r.unit for r in rows}  # the file's key
    assert all("unit" not in s for s in saved)
    a = analyze(recs, n_resamples=50)
    assert a.metrics.threshold.mode == "cv" and a.metrics.threshold.n_heldout == len(rows)
    # the records carry the rows' units, and the split helper analyze uses never cuts one
    units = [r.unit for r in recs]
    assert sorted(units) == sorted(r.unit for r in rows)
    plan = split_plan(np.array([r.label for r in recs]), np.array([r.split or "" for r in recs]),
                      np.array(units), 5, 0)
    assert plan.mode == a.metrics.threshold.mode and plan.folds is not None and _split_units(plan.folds, units) == []


def test_old_record_without_fold_group_still_loads_and_analyses(tmp_path, scripted_evaluator):
    rows, scores = _pairs(n_pairs=20, n_single=0)
    path = tmp_path / "old.jsonl"
    with path.open("w") as fh:  # the format before fold_group existed
        for r in rows:
            fh.write(json.dumps({"id": r.id, "task": "fact-check", "label": r.label, "score": scores[r.id],
                                 "model": "scripted", "spec_hash": "s1", "evaluator": "scripted_evaluator"}) + "\n")
    old = read_scores(path)
    assert len(old) == len(rows)
    assert all(r.unit == r.id for r in old)
    assert analyze(old, n_resamples=50).metrics.threshold.mode == "cv"
    # resuming that file with the rows rescores them: a record without a row hash cannot show that its
    # row is unchanged (issue 17), and the new records carry the rows' units
    ev = scripted_evaluator(scores)
    resumed = run(ev, rows, out=path, progress=False)
    assert ev.seen == len(rows)
    assert [r.unit for r in resumed] == [r.unit for r in rows]
    assert all(r.row_hash for r in read_scores(path))


def test_halueval_qa_pairs_share_a_unit(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(
        json.dumps({"knowledge": f"k{i}", "question": f"q{i}", "right_answer": f"r{i}",
                    "hallucinated_answer": f"h{i}"}) + "\n" for i in range(3)))
    rows = import_halueval_qa(path)
    assert len(rows) == 6
    assert [r.unit for r in rows[0::2]] == [r.unit for r in rows[1::2]]
    assert len({r.unit for r in rows}) == 3


@pytest.mark.parametrize("k", [2, 5])
def test_units_larger_than_pairs_stay_together(k):
    rng = np.random.default_rng(1)
    units = np.repeat([f"g{i}" for i in range(30)], 4)  # four rows per unit, mixed labels
    y = np.tile([1, 0, 1, 0], 30)
    y[rng.permutation(len(y))[:20]] ^= 1
    folds = unit_folds(y, units, k, 0)
    assert folds is not None and len(folds) == k and _split_units(folds, units) == []
