"""Prediction-powered pass rates: coverage by simulation, with a judge that leans towards PASS."""

from __future__ import annotations

import numpy as np

from judgelab.calibration import ScoreRecord, estimate_pass_rate, ppi_mean_interval

TRUE_RATE = 0.3
CONFIDENCE = 0.9


def _draw(rng, n):
    """Labels with 30% good answers; the judge passes 90% of good ones and 40% of bad ones."""
    y = (rng.random(n) < TRUE_RATE).astype(float)
    f = np.where(y == 1, rng.random(n) < 0.9, rng.random(n) < 0.4).astype(float)
    return y, f


def test_ppi_covers_the_true_rate_and_the_naive_rate_does_not():
    rng = np.random.default_rng(13)
    draws, covered, naive_covered = 500, 0, 0
    for _ in range(draws):
        y_l, f_l = _draw(rng, 150)
        _, f_u = _draw(rng, 5000)
        iv = ppi_mean_interval(y_l, f_l, f_u, confidence=CONFIDENCE)
        covered += iv.contains(TRUE_RATE)
        p = f_u.mean()
        half = 1.645 * np.sqrt(p * (1 - p) / len(f_u))
        naive_covered += p - half <= TRUE_RATE <= p + half
    # nominal minus 2 points, over 500 draws
    assert covered / draws >= CONFIDENCE - 0.02, covered / draws
    assert naive_covered == 0  # the judge's raw pass rate (about 0.55) is far from 0.3


def test_estimate_from_records_reports_both_rates():
    rng = np.random.default_rng(5)
    y_l, f_l = _draw(rng, 300)
    y_u, f_u = _draw(rng, 3000)

    def recs(y, f, prefix):
        return [ScoreRecord(id=f"{prefix}{i}", task="fact-check", label=int(a), score=0.8 if b else 0.2)
                for i, (a, b) in enumerate(zip(y, f))]

    est = estimate_pass_rate(recs(y_l, f_l, "l"), recs(y_u, f_u, "u"), threshold=0.5)
    assert est.n_labelled == 300 and est.n_unlabelled == 3000
    assert abs(est.naive.estimate - f_u.mean()) < 1e-12
    assert est.corrected.contains(TRUE_RATE) and not est.naive.contains(TRUE_RATE)
    assert est.rectifier > 0.15  # the judge leans towards PASS
    assert est.corrected.high - est.corrected.low < est.classical.high - est.classical.low + 0.05
