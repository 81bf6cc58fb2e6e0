"""Agreement figures: Cohen's kappa, TPR and TNR with intervals, the length-bias check, and the gate's floors.

The metric functions are checked against scikit-learn and scipy; the report
and metrics.json against planted scores (a judge whose score rises with the
judged text's length among the rows it should fail).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score as sk_kappa
from sklearn.metrics import recall_score

from judgelab.calibration import (
    CalibrationOptions,
    DegenerateMetricWarning,
    GateBootstrap,
    GateFloors,
    LabelledRow,
    ScoreRecord,
    agreement,
    analyze,
    calibrate,
    cohen_kappa_score,
    gate,
    length_bias,
    spearman_correlation,
    true_negative_rate,
    true_positive_rate,
)
from judgelab.cli import main
from judgelab.errors import ParameterError

# -- the metric functions -----------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metric_functions_match_scikit_learn_and_scipy(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 300)
    s = np.clip(0.5 + 0.3 * (y - 0.5) + rng.normal(0, 0.25, 300), 0, 1)
    pred = (s >= 0.45).astype(int)
    assert cohen_kappa_score(y, s, threshold=0.45) == pytest.approx(sk_kappa(y, pred))
    assert true_positive_rate(y, s, threshold=0.45) == pytest.approx(recall_score(y, pred))
    assert true_negative_rate(y, s, threshold=0.45) == pytest.approx(recall_score(1 - y, 1 - pred))
    lengths = rng.integers(10, 40, 300)  # ties, as real lengths have
    assert spearman_correlation(lengths, s) == pytest.approx(spearmanr(lengths, s).statistic)


def test_degenerate_inputs_warn_and_return_nan():
    with pytest.warns(DegenerateMetricWarning, match="TPR is undefined"):
        assert math.isnan(true_positive_rate([0, 0], [0.1, 0.9]))
    with pytest.warns(DegenerateMetricWarning, match="TNR is undefined"):
        assert math.isnan(true_negative_rate([1, 1], [0.1, 0.9]))
    with pytest.warns(DegenerateMetricWarning, match="Cohen's kappa is undefined"):
        assert math.isnan(cohen_kappa_score([0, 1], [0.9, 0.9]))
    with pytest.warns(DegenerateMetricWarning, match="constant"):
        assert math.isnan(spearman_correlation([3, 3, 3], [0.1, 0.2, 0.3]))


def test_agreement_intervals_cover_the_estimate_and_resample_pairs_together():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 100)
    s = np.clip(0.5 + 0.3 * (y - 0.5) + rng.normal(0, 0.2, 200), 0, 1)
    a = agreement(y, s, threshold=0.5, n_resamples=400)
    for iv in (a.cohen_kappa, a.tpr, a.tnr):
        assert iv.low < iv.estimate < iv.high
    assert (a.n, a.n_label_1, a.n_label_0) == (200, 100, 100)
    # each row doubled, its copy in its group: the same estimate, a cluster bootstrap as wide as the original's
    paired = agreement(np.r_[y, y], np.r_[s, s], threshold=0.5, units=[*map(str, range(200))] * 2, n_resamples=400)
    naive = agreement(np.r_[y, y], np.r_[s, s], threshold=0.5, n_resamples=400)
    assert paired.cohen_kappa.estimate == pytest.approx(a.cohen_kappa.estimate)
    width = lambda iv: iv.high - iv.low  # noqa: E731
    assert width(paired.cohen_kappa) > 1.2 * width(naive.cohen_kappa)


def test_length_bias_finds_a_planted_preference_for_long_texts():
    rng = np.random.default_rng(1)
    n = 120
    y = np.repeat([0, 1], n // 2)
    lengths = rng.integers(20, 400, n)
    fair = np.clip(0.3 + 0.4 * y + rng.normal(0, 0.1, n), 0, 1)
    biased = np.where(y == 0, np.clip(0.1 + lengths / 500 + rng.normal(0, 0.05, n), 0, 1), fair)
    lb = length_bias(y, biased, lengths, n_resamples=400)
    assert lb.spearman_by_label["0"].low > 0.5 and lb.moves_with_length
    assert lb.spearman_by_label["1"].low < 0 < lb.spearman_by_label["1"].high
    assert "among rows labelled 0 the score rises with the judged text's length" in lb.verdict
    ok = length_bias(y, fair, lengths, n_resamples=400)
    assert not ok.moves_with_length and ok.verdict.startswith("No measurable length bias")
    few = length_bias([0, 0, 1], [0.1, 0.2, 0.9], [10, 20, 30], n_resamples=50)
    assert few.spearman_by_label["0"].estimate is None and "not measurable" in few.verdict


# -- the calibration report and metrics.json -----------------------------------------


def _planted(n: int = 160, split: bool = True):
    """Rows and scores: label 0 scores rise with the response's length; label 1 scores do not."""
    rng = np.random.default_rng(0)
    rows, scores = [], {}
    for i in range(n):
        y = i % 2
        text = f"c{i} " + "word " * int(rng.integers(2, 80))
        rows.append(LabelledRow(id=f"r{i}", task="fact-check", documents=["d"], response=text, label=y,
                                split=("dev" if (i // 2) % 2 else "test") if split else None))
        base = 0.75 if y else 0.15 + len(text) / 800
        scores[text] = float(np.clip(base + rng.normal(0, 0.08), 0.01, 0.99))
    return rows, scores


_KEYS_BEFORE = {"task", "headline", "chance_note", "rows", "threshold", "heldout", "heldout_by_group",
                "in_sample_at_threshold", "abstain_band", "calibration", "calibrator", "calibrator_choice",
                "self_preference", "criteria", "policy", "calibrator_file"}


def test_report_and_metrics_show_kappa_tpr_tnr_and_the_length_check(tmp_path, scripted_evaluator):
    rows, scores = _planted()
    res = calibrate(set=rows, out=tmp_path, evaluators={"fact-check": scripted_evaluator(scores)},
                    options=CalibrationOptions(n_resamples=300, progress=False, figures=False))
    a = res.analyses["fact-check"].metrics
    # the same rows, threshold and bootstrap as the held-out table: the same kappa and interval
    for mine, theirs in ((a.agreement.cohen_kappa, a.heldout["cohen_kappa"]), (a.agreement.tpr, a.heldout["recall"])):
        assert (mine.low, mine.high) == (theirs.low, theirs.high) and mine.estimate == pytest.approx(theirs.estimate)
    assert a.agreement.rows == "held-out (test split)" and a.agreement.threshold == pytest.approx(a.threshold.value)
    assert a.length_bias.spearman_by_label["0"].low > 0 and a.length_bias.moves_with_length
    fc = json.loads((tmp_path / "metrics.json").read_text())["tasks"]["fact-check"]
    assert set(fc) - {"agreement", "length_bias", "warnings"} <= _KEYS_BEFORE  # only additions
    ag = fc["agreement"]
    assert ag["cohen_kappa"]["low"] == a.heldout["cohen_kappa"].low and ag["n"] == a.threshold.n_heldout
    assert ag["tnr"]["low"] <= ag["tnr"]["estimate"] <= ag["tnr"]["high"]
    assert fc["length_bias"]["moves_with_length"] is True
    assert fc["length_bias"]["rows_by_label"] == {"1": 80, "0": 80}
    md = (tmp_path / "report.md").read_text()
    assert "### Agreement with the labels (95% bootstrap intervals)" in md
    assert f"| Cohen's kappa | {format(a.agreement.cohen_kappa)} | {a.threshold.n_heldout} |" in md
    assert "| TNR: rows labelled 0 that fail |" in md
    assert "Length bias: does the score move with the judged text's length?" in md
    assert "among rows labelled 0 the score rises with the judged text's length" in md
    html = (tmp_path / "report.html").read_text()
    assert "Agreement with the labels" in html and "Spearman&#39;s rho" in html


def test_records_from_before_the_length_field_get_it_from_their_rows(tmp_path, scripted_evaluator):
    rows, scores = _planted(split=False)
    calibrate(set=rows, out=tmp_path, evaluators={"fact-check": scripted_evaluator(scores)},
              options=CalibrationOptions(n_resamples=100, progress=False, figures=False))
    path = tmp_path / "scores.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    assert recs[0]["response_chars"] == len(rows[0].response)
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "response_chars"}) + "\n" for r in recs))
    again = scripted_evaluator(scores)
    res = calibrate(set=rows, out=tmp_path, evaluators={"fact-check": again},
                    options=CalibrationOptions(n_resamples=100, progress=False, figures=False))
    assert again.seen == 0 and res.analyses["fact-check"].metrics.length_bias.rows_by_label == {"1": 80, "0": 80}
    assert res.analyses["fact-check"].metrics.agreement.rows == "held-out (cross-validation folds)"
    # analysing the bare records (no rows to read lengths from): no length check, the rest as before
    bare = analyze([ScoreRecord.model_validate({k: v for k, v in r.items() if k != "response_chars"}) for r in recs],
                   n_resamples=100)
    assert bare.metrics.length_bias is None and "length_bias" not in bare.metrics.model_fields_set
    assert bare.metrics.agreement is not None


# -- the gate's floors ----------------------------------------------------------------


def _scores(path, *, n=200, noise=0.0, seed=0):
    """A scored run: label 1 scores Beta(3, 1.5), label 0 Beta(1.5, 3); ``noise`` of the labels are random."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            y = i % 2
            s = float(rng.beta(3, 1.5) if y else rng.beta(1.5, 3))
            label = int(rng.integers(0, 2)) if rng.random() < noise else y
            fh.write(json.dumps({"id": f"r{i}", "task": "fact-check", "label": label, "score": s, "spec_hash": "a",
                                 "template_hash": "t", "model": "m", "evaluator": "FactCheckingEvaluator"}) + "\n")
    return path


def test_min_rows_passes_with_enough_rows_and_fails_with_one_line(tmp_path, capsys):
    base = _scores(tmp_path / "base" / "scores.jsonl")
    assert main(["gate", str(base), "--set", str(base), "--min-rows", "200"]) == 0
    out = capsys.readouterr().out
    assert "agreement of the new run with its labels at threshold 0.500 (200 rows): Cohen's kappa" in out
    assert "(floors: --min-rows 200)" in out
    assert main(["gate", str(base), "--set", str(base), "--min-rows", "201"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first == ("judgelab gate: FAIL: the new run has 200 labelled rows, fewer than --min-rows 201: label more "
                     "rows before gating on this judge")


def test_min_kappa_passes_above_the_floor_and_fails_below_it(tmp_path, capsys):
    base = _scores(tmp_path / "base" / "scores.jsonl")
    res = gate([ScoreRecord.model_validate_json(x) for x in base.read_text().splitlines()],
               [ScoreRecord.model_validate_json(x) for x in base.read_text().splitlines()],
               floors=GateFloors(min_kappa=0.0), resampling=GateBootstrap(n_resamples=200))
    kappa = res.agreement.cohen_kappa.estimate
    assert res.passed and 0.2 < kappa < 0.9 and res.agreement.cohen_kappa.low < kappa < res.agreement.cohen_kappa.high
    assert main(["gate", str(base), "--set", str(base), "--min-kappa", f"{kappa - 0.01:.3f}"]) == 0
    capsys.readouterr()
    floor = float(f"{kappa + 0.01:.3f}")
    assert main(["gate", str(base), "--set", str(base), "--min-kappa", str(floor)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"judgelab gate: FAIL: Cohen's kappa {kappa:.3f} [")
    assert out[0].endswith(f"of the new run's verdicts at threshold 0.500 against its 200 labels is below "
                           f"--min-kappa {floor:g}")
    # a set whose labels are noise: kappa near 0 fails a modest floor, and --json carries the figures
    noisy = _scores(tmp_path / "noisy.jsonl", noise=1.0, seed=3)
    assert main(["gate", str(noisy), "--set", str(noisy), "--min-kappa", "0.2", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is False and doc["reason"].startswith("Cohen's kappa") and doc["min_kappa"] == 0.2
    assert set(doc["agreement"]) >= {"cohen_kappa", "tpr", "tnr", "n"}


def test_bad_floors_are_one_line_user_errors(tmp_path, capsys):
    base = _scores(tmp_path / "base" / "scores.jsonl", n=20)
    assert main(["gate", str(base), "--set", str(base), "--min-kappa", "1.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'min_kappa' parameter of gate must be None or a number in [-1, 1]" in err
    assert main(["gate", str(base), "--set", str(base), "--min-rows", "0"]) == 2
    assert "'min_rows' parameter of gate must be None or an int >= 1. Got 0 instead." in capsys.readouterr().err
    with pytest.raises(ParameterError, match="'min_rows' parameter of gate must be None or an int >= 1"):
        gate([], [], floors=GateFloors(min_rows=-3))
    with pytest.raises(ParameterError, match="'floors' parameter of gate must be None or a GateFloors"):
        gate([], [], floors={"min_rows": 3})  # type: ignore[arg-type]  # the fields as a dict: a one-line error
    with pytest.raises(TypeError, match="unexpected keyword argument 'min_kappa'"):
        gate([], [], min_kappa=0.3)  # type: ignore[call-arg]  # no hidden parameters: floors are a GateFloors
