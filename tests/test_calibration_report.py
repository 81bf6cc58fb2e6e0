"""Analysis and report from saved scores (no model): headline, held-out honesty, files, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.calibration import (
    CalibrationOptions,
    LabelledRow,
    ScoreRecord,
    TaskMetrics,
    analyze,
    calibrate,
    compare_runs,
    criteria_thresholds,
    load_calibrator,
    run,
    write_rows,
)
from judgelab.calibration.analysis import MEASURES
from judgelab.calibration.report import Section, calibration_report
from judgelab.errors import DataError


def _set(n=160, seed=0, split=True, gens=False, strength=0.3):
    rng = np.random.default_rng(seed)
    rows, scores = [], {}
    for i in range(n):
        y = int(rng.integers(0, 2))
        rows.append(LabelledRow(
            id=f"r{i}", task="fact-check" if i % 4 else "relevancy", documents=["d"], response=f"c{i}", label=y,
            split=("dev" if i % 2 else "test") if split else None, group=f"g{i % 3}",
            generator=(["google/gemma-x", "meta/llama"][i % 2] if gens else None),
        ))
        scores[f"c{i}"] = float(np.clip(rng.normal(0.5 + strength * (y - 0.5), 0.15), 0.01, 0.99))
    return rows, scores


def test_calibrate_with_scripted_evaluators_writes_everything(tmp_path, scripted_evaluator):
    rows, scores = _set(gens=True)
    ev = scripted_evaluator(scores)
    calibrate(set=rows, out=tmp_path, evaluators={"fact-check": ev, "relevancy": ev},
              options=CalibrationOptions(self_generators=["*gemma*"], n_resamples=200, progress=False))
    for name in ("scores.jsonl", "metrics.json", "report.md", "report.html", "calibrator-fact-check.json"):
        assert (tmp_path / name).exists(), name
    md = (tmp_path / "report.md").read_text()
    # the answer first
    first = md.splitlines()[2]
    assert first.startswith("**") and ":** Ship threshold" in first
    assert "**fact-check:** Ship threshold" in md
    assert "held-out test rows (tuned on" in md
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 10 and "Self-preference" in html
    m = json.loads((tmp_path / "metrics.json").read_text())
    fc = m["tasks"]["fact-check"]
    assert fc["threshold"]["mode"] == "split"
    assert fc["headline"].startswith("Ship threshold")
    assert fc["heldout"]["auroc"]["low"] < fc["heldout"]["auroc"]["estimate"] < fc["heldout"]["auroc"]["high"]
    assert fc["self_preference"]["by_generator"]
    cal = load_calibrator(tmp_path / "calibrator-fact-check.json")
    assert cal.predict(np.array([0.5])).shape == (1,)
    # rerunning re-analyses without scoring again
    ev2 = scripted_evaluator(scores)
    calibrate(set=rows, out=tmp_path, evaluators={"fact-check": ev2, "relevancy": ev2},
              options=CalibrationOptions(n_resamples=50, progress=False, figures=False))
    assert ev2.seen == 0
    # another judge (a model id whose spec and evaluators did not score these rows) is refused
    # before anything is loaded or scored, instead of reporting the scripted judge's numbers
    with pytest.raises(DataError, match=r"40 record\(s\) scored by another model spec"):
        calibrate("gemma-3-270m", set=rows, out=tmp_path,
                  options=CalibrationOptions(n_resamples=50, progress=False, figures=False))


def test_analyze_and_the_report_follow_the_one_list_of_measures():
    """Every MEASURES entry is one TaskMetrics field; analyze fills the computed ones, the report shows every table."""
    fields = [m.field for m in MEASURES]
    assert len(set(fields)) == len(fields) and set(fields) <= set(TaskMetrics.model_fields)
    rows, scores = _set(gens=True)
    recs = [ScoreRecord(id=r.id, task="fact-check", label=r.label, score=scores[r.response], split=r.split,
                        generator=r.generator, unit=r.id) for r in rows]
    a = analyze(recs, self_generators=["*gemma*"], n_resamples=50)
    computed = {m.field for m in MEASURES if m.compute is not None}
    assert computed - {"length_bias"} <= a.metrics.model_fields_set  # no response_chars: no length bias, not written
    assert "length_bias" not in a.metrics.model_fields_set and a.metrics.self_preference is not None
    task = next(b for b in calibration_report({"fact-check": a}).blocks if isinstance(b, Section))
    shown = [b.heading for b in task.blocks if isinstance(b, Section)]
    assert shown == [t.title for m in MEASURES for t in m.tables(a.metrics)]
    assert "Agreement with the labels (95% bootstrap intervals)" in shown and "Self-preference" in shown


def test_without_split_uses_cross_validation_and_says_so():
    rows, scores = _set(split=False)
    recs = [ScoreRecord(id=r.id, task="fact-check", label=r.label, score=scores[r.response]) for r in rows]
    a = analyze(recs, n_resamples=100)
    assert a.metrics.threshold.mode == "cv" and "cross-validation" in a.headline()
    assert a.metrics.threshold.n_heldout == len(rows)


def test_tiny_set_is_marked_in_sample():
    recs = [ScoreRecord(id=str(i), task="fact-check", label=int(i == 0), score=0.1 * i) for i in range(6)]
    a = analyze(recs, n_resamples=50)
    assert a.metrics.threshold.mode == "in-sample" and "IN-SAMPLE" in a.headline()


def test_chance_judge_is_reported_as_chance():
    rows, scores = _set(n=120, strength=0.0)
    recs = [ScoreRecord(id=r.id, task="fact-check", label=r.label, score=scores[r.response], split=r.split) for r in rows]
    a = analyze(recs, n_resamples=300)
    au = a.metrics.heldout["auroc"]
    assert au.low <= 0.5 <= au.high
    assert "not distinguishable from chance" in a.metrics.chance_note


def test_errors_are_counted_not_scored():
    recs = [ScoreRecord(id=str(i), task="fact-check", label=i % 2, score=0.2 + 0.5 * (i % 2)) for i in range(40)]
    recs.append(ScoreRecord(id="bad", task="fact-check", label=1, error="ContextLengthError: too long"))
    a = analyze(recs, n_resamples=50)
    assert (a.metrics.rows.errors, a.metrics.rows.scored) == (1, 40)


def test_compare_paired_bootstrap_and_mcnemar():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    good = np.clip(rng.normal(0.3 + 0.4 * y, 0.15), 0, 1)
    bad = np.clip(rng.normal(0.45 + 0.1 * y, 0.15), 0, 1)
    a = [ScoreRecord(id=str(i), task="t", label=int(y[i]), score=float(bad[i])) for i in range(400)]
    b = [ScoreRecord(id=str(i), task="t", label=int(y[i]), score=float(good[i])) for i in range(400)]
    c = compare_runs(a, b, n_resamples=300)
    assert c.difference["auroc"].low > 0 and c.difference["accuracy"].low > 0
    assert c.mcnemar_c > c.mcnemar_b and c.mcnemar_p < 1e-6
    same = compare_runs(a, a, n_resamples=50)
    assert same.mcnemar_p == 1.0 and same.difference["auroc"].estimate == 0


def test_criteria_thresholds_per_criterion(tmp_path):
    rng = np.random.default_rng(0)
    recs = []
    for i in range(200):
        la, lb = int(rng.integers(0, 2)), int(rng.integers(0, 2))
        recs.append(ScoreRecord(id=str(i), task="criteria", label=la & lb, score=0.5,
                                labels={"tone": la, "facts": lb},
                                criteria={"tone": float(np.clip(0.2 + 0.3 * la + rng.normal(0, .05), 0, 1)),
                                          "facts": float(np.clip(0.5 + 0.3 * lb + rng.normal(0, .05), 0, 1))}))
    th = criteria_thresholds(recs)
    assert th["tone"]["minimum"] == pytest.approx(0.35, abs=0.07)
    assert th["facts"]["minimum"] == pytest.approx(0.65, abs=0.07)
    a = analyze(recs, n_resamples=50)
    assert set(a.metrics.criteria) == {"tone", "facts"}


def test_cli_calibrate_and_compare_on_saved_scores(tmp_path, capsys, scripted_evaluator):
    from judgelab.cli import main
    from judgelab.evaluators import FactCheckingEvaluator

    class AsDefaultFactCheck(scripted_evaluator):
        def identity(self):  # scores as the CLI's default evaluator would (the spec of a bare GGUF is unknown)
            return FactCheckingEvaluator.default_identity(None)

    rows, scores = _set(n=80)
    out = tmp_path / "run"
    run(AsDefaultFactCheck(scores), [r for r in rows if r.task == "fact-check"], out=out / "scores.jsonl",
        progress=False)
    # the CLI on a set whose rows are all scored already never needs the model
    set_path = tmp_path / "set.jsonl"
    write_rows([r for r in rows if r.task == "fact-check"], set_path)
    assert main(["calibrate", "--set", str(set_path), "--out", str(out), "--resamples", "50",
                 "--no-progress", "--no-plots", "--model", "/nonexistent.gguf"]) == 0
    capsys.readouterr()
    assert main(["compare", str(out / "scores.jsonl"), str(out / "scores.jsonl"), "--resamples", "50"]) == 0
    assert "McNemar" in capsys.readouterr().out
