"""Metrics agree with scikit-learn; bootstrap intervals cover at about the nominal rate."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm
from sklearn.calibration import calibration_curve

from judgelab.calibration import DegenerateMetricWarning, binary_metrics, bootstrap_interval, calibration_bins, expected_calibration_error
from judgelab.calibration.analysis import fast_binary_metrics
from judgelab.errors import JudgelabError


@pytest.mark.parametrize("seed", range(10))
def test_metrics_match_sklearn_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 300))
    y = rng.integers(0, 2, n)
    s = np.clip(rng.random(n) * 0.6 + 0.4 * y * rng.random(n), 0, 1)
    t = float(rng.uniform(0.2, 0.8))
    m = binary_metrics(y, s, threshold=t)
    p = (s >= t).astype(int)
    assert m["accuracy"] == pytest.approx(skm.accuracy_score(y, p))
    assert m["balanced_accuracy"] == pytest.approx(skm.balanced_accuracy_score(y, p))
    assert m["precision"] == pytest.approx(skm.precision_score(y, p, zero_division=0))
    assert m["recall"] == pytest.approx(skm.recall_score(y, p))
    assert m["f1"] == pytest.approx(skm.f1_score(y, p))
    assert m["mcc"] == pytest.approx(skm.matthews_corrcoef(y, p))
    assert m["cohen_kappa"] == pytest.approx(skm.cohen_kappa_score(y, p))
    assert m["auroc"] == pytest.approx(skm.roc_auc_score(y, s))
    assert m["auprc"] == pytest.approx(skm.average_precision_score(y, s))
    assert m["brier"] == pytest.approx(skm.brier_score_loss(y, s))
    assert m["log_loss"] == pytest.approx(skm.log_loss(y, np.clip(s, 1e-7, 1 - 1e-7)))


@pytest.mark.parametrize("seed", range(30))
def test_fast_metrics_equal_sklearn_metrics_including_ties_and_nan(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 50))
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), 1)  # many ties and values on bin edges
    t = float(rng.random())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        slow = binary_metrics(y, s, threshold=t)
    fast = fast_binary_metrics(y, s, t)
    for k, v in slow.items():
        if math.isnan(v):
            assert math.isnan(fast[k]), k
        else:
            assert fast[k] == pytest.approx(v), k


def test_calibration_bins_match_sklearn_calibration_curve():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 500)
    s = rng.random(500)
    frac, mean = calibration_curve(y, s, n_bins=10, strategy="uniform")
    mp, fp, _ = calibration_bins(y, s, n_bins=10)
    np.testing.assert_allclose(mp, mean)
    np.testing.assert_allclose(fp, frac)


def test_ece_zero_when_calibrated_by_construction_and_known_value():
    y = np.array([0, 1, 0, 1])
    assert expected_calibration_error(y, np.full(4, 0.5)) == pytest.approx(0.0)
    # all predict 0.9, half positive -> |0.9 - 0.5| = 0.4
    assert expected_calibration_error(y, np.full(4, 0.9)) == pytest.approx(0.4)
    assert expected_calibration_error(y, np.full(4, 0.9), n_bins=1, strategy="quantile") == pytest.approx(0.4)
    # equal-mass with one row per bin: mean |0.9 - y|
    assert expected_calibration_error(y, np.full(4, 0.9), n_bins=4, strategy="quantile") == pytest.approx(0.5)


def test_degenerate_input_warns_and_returns_nan():
    y = np.ones(10, dtype=int)
    s = np.linspace(0, 1, 10)
    with pytest.warns(DegenerateMetricWarning):
        m = binary_metrics(y, s)
    assert math.isnan(m["auroc"]) and math.isnan(m["balanced_accuracy"]) and math.isnan(m["mcc"])
    assert m["accuracy"] == pytest.approx(0.5)


def test_parameter_validation_message():
    with pytest.raises(JudgelabError, match="'n_bins' parameter of calibration_bins must be an int >= 1. Got 0"):
        calibration_bins([0, 1], [0.1, 0.9], n_bins=0)
    with pytest.raises(JudgelabError, match="same length"):
        binary_metrics([0, 1], [0.1])


def test_bootstrap_interval_covers_truth_at_about_nominal_rate():
    # Accuracy of a judge that is right with probability 0.7: the 95% interval
    # from one sample of 200 rows should contain 0.7 about 95% of the time.
    truth = 0.7
    covered = 0
    trials = 200
    for i in range(trials):
        rng = np.random.default_rng(1000 + i)
        correct = (rng.random(200) < truth).astype(float)
        iv = bootstrap_interval(np.mean, correct, n_resamples=400, seed=i)
        covered += iv.contains(truth)
    rate = covered / trials
    assert 0.89 <= rate <= 0.99, rate


def test_bootstrap_seed_zero_is_a_seed():
    x = np.random.default_rng(0).random(50)
    a = bootstrap_interval(np.mean, x, n_resamples=100, seed=0)
    b = bootstrap_interval(np.mean, x, n_resamples=100, seed=0)
    assert (a.low, a.high) == (b.low, b.high)


def test_unit_bootstrap_widens_intervals_on_duplicated_rows():
    """Each row twice: resampling rows treats duplicates as independent evidence
    (too narrow); resampling whole units gives the interval of the undoubled set."""
    import numpy as np

    from judgelab.calibration import bootstrap_many

    rng = np.random.default_rng(3)
    correct = (rng.random(150) < 0.7).astype(float)

    def stat(c):
        return {"accuracy": float(np.mean(c))}

    single = bootstrap_many(stat, [correct], n_resamples=2000, seed=1)["accuracy"]
    doubled = np.repeat(correct, 2)
    rows = bootstrap_many(stat, [doubled], n_resamples=2000, seed=1)["accuracy"]
    by_unit = bootstrap_many(stat, [doubled], n_resamples=2000, seed=1, units=np.repeat(np.arange(150), 2))["accuracy"]
    width = lambda iv: iv.high - iv.low  # noqa: E731
    assert width(rows) < 0.8 * width(single)
    assert abs(width(by_unit) - width(single)) < 0.15 * width(single)
