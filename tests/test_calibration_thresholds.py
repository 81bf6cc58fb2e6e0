"""The threshold chooser finds known optima; the abstain band meets its target."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.calibration import abstain_band, choose_threshold, parse_strategy, threshold_curve
from judgelab.errors import JudgelabError


def _separable():
    s = np.array([0.05, 0.1, 0.2, 0.3, 0.35, 0.6, 0.7, 0.8, 0.9, 0.95])
    y = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    return y, s


@pytest.mark.parametrize("strategy", ["balanced_accuracy", "f1", "youden", "cost:1,1"])
def test_separable_scores_split_between_the_classes(strategy):
    y, s = _separable()
    t = choose_threshold(y, s, strategy)
    assert 0.35 < t <= 0.6
    assert t == pytest.approx(0.475)  # the midpoint


def test_known_optimum_on_synthetic_gaussians():
    # Equal-variance Gaussians, balanced classes: balanced accuracy is best at the midpoint.
    rng = np.random.default_rng(0)
    n = 20000
    y = rng.integers(0, 2, n)
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.08), 0, 1)
    assert choose_threshold(y, s, "balanced_accuracy") == pytest.approx(0.5, abs=0.015)
    # FP five times as costly as FN: Bayes threshold where 5*phi(t; .4) = phi(t; .6)
    # -> t = 0.5 + 0.08**2 * ln(5) / 0.2
    expected = 0.5 + 0.08**2 * np.log(5) / 0.2
    assert choose_threshold(y, s, "cost:5,1") == pytest.approx(expected, abs=0.02)


def test_brute_force_agrees():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 300)
    s = np.round(np.clip(rng.normal(0.45 + 0.1 * y, 0.15), 0, 1), 2)
    t = choose_threshold(y, s, "f1")
    curve = threshold_curve(y, s)
    assert np.nanmax(curve["f1"]) == pytest.approx(curve["f1"][np.argmin(np.abs(curve["threshold"] - t))])
    grid = np.linspace(0, 1.001, 2001)

    def f1(th):
        p = s >= th
        tp = (p & (y == 1)).sum()
        return 2 * tp / (2 * tp + (p & (y == 0)).sum() + (~p & (y == 1)).sum())

    assert f1(t) == pytest.approx(max(f1(g) for g in grid))


def test_precision_and_recall_targets():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 2000)
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.1), 0, 1)
    tp = choose_threshold(y, s, "precision>=0.9")
    p = s >= tp
    assert (y[p] == 1).mean() >= 0.9
    # and no threshold with precision >= 0.9 has a higher recall (brute force)
    best = max(
        (s[y == 1] >= th).mean()
        for th in np.unique(s)
        if (y[s >= th] == 1).mean() >= 0.9
    )
    assert (s[y == 1] >= tp).mean() == pytest.approx(best)
    tr = choose_threshold(y, s, "recall>=0.95")
    assert (s[y == 1] >= tr).mean() >= 0.95
    with pytest.warns(UserWarning, match="No threshold reaches precision"):
        choose_threshold(np.array([0, 1, 0, 1]), np.array([0.9, 0.1, 0.8, 0.2]), "precision>=0.99")


def test_parse_strategy_errors_say_what_is_allowed():
    assert str(parse_strategy("Recall >= 0.9")) == "recall>=0.9"
    assert parse_strategy("cost:5,1").cost_fp == 5
    with pytest.raises(JudgelabError, match="precision>=X"):
        parse_strategy("accuracy")


def test_abstain_band_meets_target_and_covers_more_with_a_looser_target():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 3000)
    s = np.clip(rng.normal(0.4 + 0.2 * y, 0.1), 0, 1)
    tight = abstain_band(y, s, target_error=0.03)
    loose = abstain_band(y, s, target_error=0.15)
    assert tight.error <= 0.03 and loose.error <= 0.15
    assert tight.low <= tight.high
    assert 0 < tight.coverage < loose.coverage <= 1
