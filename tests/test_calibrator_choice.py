"""``--calibrator auto``: the calibrator with the best held-out ECE is shipped, never one worse than raw."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.calibration import LabelledRow, run, write_rows
from judgelab.cli import main
from judgelab.evaluators import FactCheckingEvaluator


@pytest.fixture
def as_default_fact_check(scripted_evaluator):
    class AsDefaultFactCheck(scripted_evaluator):
        def identity(self):  # scores as the CLI's default evaluator would (the spec of a bare GGUF is unknown)
            return FactCheckingEvaluator.default_identity(None)

    return AsDefaultFactCheck


def _confidently_wrong_set(n=200, share=0.1, seed=0):
    """A judge that is mostly sensible but confidently wrong on ~10% of the rows (scores 0.001 / 0.999).

    Its calibration curve is not a logistic function of the logit, and the confidently wrong rows
    dominate Platt's log-loss fit: on this set Platt is the worst calibrator, worse than raw.
    """
    rng = np.random.default_rng(seed)
    y = rng.permutation([0, 1] * (n // 2))
    s = np.where(y == 1, rng.beta(4, 2, n), rng.beta(2, 4, n))
    wrong = rng.random(n) < share
    s[wrong] = np.where(y[wrong] == 1, 0.001, 0.999)
    rows = [LabelledRow(id=f"r{i}", task="fact-check", documents=["d"], response=f"c{i}", label=int(v))
            for i, v in enumerate(y)]
    return rows, {f"c{i}": float(v) for i, v in enumerate(s)}


@pytest.fixture
def scored(tmp_path, as_default_fact_check):
    rows, scores = _confidently_wrong_set()
    out = tmp_path / "run"
    run(as_default_fact_check(scores), rows, out=out / "scores.jsonl", progress=False)
    set_path = tmp_path / "set.jsonl"
    write_rows(rows, set_path)
    return set_path, out


def _calibrate(set_path, out, *extra):
    # every row is scored already: the CLI never needs the model
    return main(["calibrate", "--set", str(set_path), "--out", str(out), "--resamples", "50", "--no-progress",
                 "--no-plots", "--model", "/nonexistent.gguf", *extra])


def test_auto_ships_the_best_held_out_ece_where_platt_is_worst(scored, capsys):
    set_path, out = scored
    assert _calibrate(set_path, out) == 0
    printed = capsys.readouterr().out
    task = json.loads((out / "metrics.json").read_text())["tasks"]["fact-check"]
    table = {k: v["ece_after"] for k, v in task["calibration"].items()}
    raw = task["calibration"]["platt"]["ece_before"]
    assert max(table, key=table.get) == "platt" and table["platt"] > raw  # the set is what it should be
    best = min(table, key=table.get)
    choice = task["calibrator_choice"]
    assert choice["requested"] == "auto" and choice["shipped"] == best == "isotonic"
    assert "auto picked the isotonic calibrator: the lowest 5-fold cross-validated ECE" in choice["reason"]
    assert json.loads((out / "calibrator-fact-check.json").read_text())["kind"] == best
    assert "calibrator: auto picked the isotonic calibrator" in printed
    assert "(isotonic, held-out" in task["headline"]
    assert "Shipped: auto picked the isotonic calibrator" in (out / "report.md").read_text()


def test_an_explicit_name_wins_unless_it_is_worse_than_raw(scored, capsys):
    set_path, out = scored
    assert _calibrate(set_path, out, "--calibrator", "isotonic") == 0
    task = json.loads((out / "metrics.json").read_text())["tasks"]["fact-check"]
    assert task["calibrator_choice"]["shipped"] == "isotonic"
    assert "as asked (--calibrator isotonic)" in task["calibrator_choice"]["reason"]
    # Platt makes the held-out ECE worse than the raw scores: raw is shipped, and the report says so
    assert _calibrate(set_path, out, "--calibrator", "platt") == 0
    printed = capsys.readouterr().out
    task = json.loads((out / "metrics.json").read_text())["tasks"]["fact-check"]
    choice = task["calibrator_choice"]
    assert choice["requested"] == "platt" and choice["shipped"] == "raw" and choice["replaced_by_raw"]
    assert "made the held-out ECE worse than the raw scores" in choice["reason"]
    assert task["calibrator"] is None and "calibrator_file" not in task
    assert not (out / "calibrator-fact-check.json").exists()  # the isotonic file of the run before is gone
    assert "no calibrator shipped" in task["headline"] and "raw scores are shipped instead" in printed
