"""One name for the resampling unit: ``unit`` / ``units`` (no model).

Rows that stay together in folds and bootstrap resamples were called ``groups``, ``clusters``,
``fold_group`` and ``fold_key``. The file field stays ``meta["pair"]`` (read in one place) and
scores.jsonl keeps the key ``fold_group``; the old keywords and attributes still work for one release
and warn.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from judgelab.calibration import (
    LabelledRow,
    ScoreRecord,
    agreement,
    bootstrap_many,
    length_bias,
    pair_groups,
    pair_units,
    ppi_mean_interval,
    read_scores,
)
from judgelab.calibration.analysis import group_folds, unit_folds
from judgelab.errors import ParameterError

SRC = Path(__file__).resolve().parents[1] / "src" / "judgelab"


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.clip(0.5 * y + rng.normal(0.25, 0.2, n), 0, 1)
    units = [f"u{i // 2}" for i in range(n)]
    return y, s, units


def test_the_file_field_meta_pair_is_read_in_one_place():
    readers = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                key = node.slice
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and node.args:
                key = node.args[0]
            if isinstance(key, ast.Constant) and key.value == "pair":
                readers.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert [r.split(":")[0] for r in readers] == ["calibration/data/_rows.py"], readers


def test_score_record_unit_keeps_the_file_key_fold_group(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text(
        json.dumps({"id": "a", "task": "fact-check", "label": 1, "fold_group": "p1", "score": 0.7}) + "\n"
        + json.dumps({"id": "b", "task": "fact-check", "label": 0, "score": 0.2}) + "\n"  # before the key existed
    )
    a, b = read_scores(path)
    assert (a.unit, b.unit) == ("p1", "b")
    assert a.model_dump(by_alias=True, exclude_none=True)["fold_group"] == "p1"
    assert ScoreRecord(id="c", task="fact-check", label=1, unit="p2").unit == "p2"


@pytest.mark.parametrize("call", [
    lambda y, s, u, **kw: agreement(y, s, threshold=0.5, n_resamples=200, **kw).cohen_kappa,
    lambda y, s, u, **kw: length_bias(y, s, np.arange(len(y)) % 7 + 1.0, n_resamples=200, **kw).spearman_by_label["1"],
], ids=["agreement", "length_bias"])
def test_groups_keyword_warns_and_means_units(call):
    y, s, units = _data()
    new = call(y, s, units, units=units)
    with pytest.warns(DeprecationWarning, match="'groups' is deprecated.*use 'units'"):
        old = call(y, s, units, groups=units)
    assert (old.estimate, old.low, old.high) == (new.estimate, new.low, new.high)
    plain = call(y, s, units)
    assert (plain.low, plain.high) != (new.low, new.high)  # the units do change the draws
    with pytest.raises(ParameterError, match="not both"):
        call(y, s, units, units=units, groups=units)


def test_bootstrap_many_clusters_keyword_warns_and_means_units():
    y, s, units = _data()

    def stat(y, s):
        return {"m": float(np.mean((s >= 0.5) == y))}

    new = bootstrap_many(stat, [y, s], n_resamples=200, units=units)["m"]
    with pytest.warns(DeprecationWarning, match="'clusters' is deprecated.*use 'units'"):
        old = bootstrap_many(stat, [y, s], n_resamples=200, clusters=units)["m"]
    assert (old.low, old.high) == (new.low, new.high)


def test_ppi_clusters_keywords_warn_and_mean_units():
    y, s, units = _data()
    f = (s >= 0.5).astype(float)
    new = ppi_mean_interval(y, f, f, units_labelled=units, units_unlabelled=units)
    with pytest.warns(DeprecationWarning) as caught:
        old = ppi_mean_interval(y, f, f, clusters_labelled=units, clusters_unlabelled=units)
    assert sorted(str(w.message).split("'")[1] for w in caught) == ["clusters_labelled", "clusters_unlabelled"]
    assert (old.low, old.high) == (new.low, new.high)
    assert (ppi_mean_interval(y, f, f).low, ) != (new.low, )


def test_renamed_functions_and_attributes_warn():
    y, _, units = _data()
    with pytest.warns(DeprecationWarning, match="use 'pair_units'"):
        assert (pair_groups(units) == pair_units(units)).all()
    with pytest.warns(DeprecationWarning, match="use 'unit_folds'"):
        old = group_folds(y, np.array(units), 5, 0)
    assert [list(f) for f in old] == [list(f) for f in unit_folds(y, np.array(units), 5, 0)]
    row = LabelledRow(id="r", task="fact-check", response="x", label=1, meta={"pair": "q7"})
    rec = ScoreRecord(id="r", task="fact-check", label=1, unit=row.unit)
    for obj, name in ((row, "fold_group"), (rec, "fold_key"), (rec, "fold_group")):
        with pytest.warns(DeprecationWarning, match=f"'{name}' is deprecated.*use 'unit'"):
            assert getattr(obj, name) == "q7"
