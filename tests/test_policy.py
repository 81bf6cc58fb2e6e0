"""The pass/fail/abstain policy: its guarantee, by simulation, and its file.

The guarantee: among decided rows the error rate is <= alpha with
probability >= 1 - delta over the calibration draw. Over N independent
calibration/test splits, the number of splits whose realised error on the
test rows exceeds alpha is then at most Binomial(N, delta) (plus the small
chance that a large test split overshoots a risk just under alpha). The
tests accept a count up to the 99.9% quantile of Binomial(N, delta), so a
valid method fails them with probability about 0.001; the in-sample band
(the old empirical abstain band) is shown to fail the same check, so the
check can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from judgelab.calibration import LTTSettings, ScoreRecord, abstain_band, fit_policy, load_policy
from judgelab.calibration.policy import fit_arrays, policy_decisions
from judgelab.errors import PolicyMismatchError

ALPHA, DELTA = 0.1, 0.1
N_SPLITS = 500
N_CAL, N_TEST = 500, 20_000


def _scores(rng, n, a=3.0, b=1.5):
    """Labels 50/50; label 1 scores Beta(a, b), label 0 scores Beta(b, a)."""
    y = rng.integers(0, 2, n)
    s = np.where(y == 1, rng.beta(a, b, n), rng.beta(b, a, n))
    return s, y


def _realised_error(lower, upper, s, y):
    d = policy_decisions(lower, upper, s)
    decided = d != "abstain"
    if not decided.any():
        return 0.0, 0.0
    wrong = ((d == "pass") & (y == 0)) | ((d == "fail") & (y == 1))
    return float(wrong.sum() / decided.sum()), float(decided.mean())


def _allowed(n: int, delta: float) -> int:
    """Most exceedances a method with P(exceed) <= delta shows in n splits, at the 99.9% level."""
    return int(stats.binom.ppf(0.999, n, delta))


def test_guarantee_holds_over_random_splits():
    rng = np.random.default_rng(20261201)
    exceed = feasible = 0
    naive_exceed = 0
    coverages = []
    for k in range(N_SPLITS):
        s, y = _scores(rng, N_CAL + N_TEST)
        perm = rng.permutation(len(s))
        cal, test = perm[:N_CAL], perm[N_CAL:]
        fit = fit_arrays(s[cal], y[cal], settings=LTTSettings(alpha=ALPHA, delta=DELTA, seed=k))
        if fit.feasible:
            feasible += 1
            err, cov = _realised_error(fit.lower, fit.upper, s[test], y[test])
            exceed += err > ALPHA
            coverages.append(cov)
        band = abstain_band(y[cal], s[cal], target_error=ALPHA)
        err, _ = _realised_error(band.low, band.high, s[test], y[test])
        naive_exceed += err > ALPHA
    allowed = _allowed(N_SPLITS, DELTA)
    assert exceed <= allowed, f"{exceed} of {N_SPLITS} splits exceeded alpha; a delta={DELTA} guarantee allows {allowed}"
    # the check has teeth: the in-sample band, tuned to sit at alpha, overshoots about half the time
    assert naive_exceed > allowed
    # and the policy is useful on this judge: it decides something in most splits
    assert feasible > N_SPLITS / 2 and np.mean(coverages) > 0.15


def _pairs(rng, n_pairs):
    """Planted within-pair correlation: both rows of a pair have the same label and (almost) the same score."""
    s, y = _scores(rng, n_pairs)
    s2 = np.repeat(s, 2) + rng.normal(0, 1e-4, 2 * n_pairs)
    return np.clip(s2, 0, 1), np.repeat(y, 2), np.repeat(np.arange(n_pairs), 2)


def test_pairs_are_one_unit_and_the_guarantee_holds_for_them():
    rng = np.random.default_rng(7)
    n_sims, n_pairs = 200, 250
    exceed = {"units": 0, "rows": 0}
    coverage = {"units": [], "rows": []}
    differ = 0
    for k in range(n_sims):
        s, y, unit = _pairs(rng, n_pairs)
        st, yt, _ = _pairs(rng, 10_000)
        settings = LTTSettings(alpha=ALPHA, delta=DELTA, seed=k)
        fits = {"units": fit_arrays(s, y, unit, settings), "rows": fit_arrays(s, y, None, settings)}
        assert fits["units"].unit_size == 2 and fits["rows"].unit_size == 1
        differ += (fits["units"].lower, fits["units"].upper) != (fits["rows"].lower, fits["rows"].upper)
        for name, fit in fits.items():
            err, cov = _realised_error(fit.lower, fit.upper, st, yt) if fit.feasible else (0.0, 0.0)
            exceed[name] += err > ALPHA
            coverage[name].append(cov)
    # the planted correlation changes the thresholds: half as many independent units, wider bands
    assert differ > n_sims / 2
    assert np.mean(coverage["units"]) < np.mean(coverage["rows"])
    assert exceed["units"] <= _allowed(n_sims, DELTA)
    # treating the twins as independent rows over-trusts them: it overshoots more often
    assert exceed["rows"] > exceed["units"]


def test_mondrian_bounds_false_pass_within_label_0():
    rng = np.random.default_rng(3)
    exceed = 0
    for k in range(200):
        s, y = _scores(rng, 600)
        st, yt = _scores(rng, 20_000)
        fit = fit_arrays(s, y, settings=LTTSettings(alpha=0.05, delta=DELTA, mondrian=True, seed=k))
        if not fit.feasible:
            continue
        d = policy_decisions(fit.lower, fit.upper, st)
        exceed += ((d == "pass") & (yt == 0)).sum() / (yt == 0).sum() > 0.05
    assert exceed <= _allowed(200, DELTA)


def test_infeasible_policy_says_how_many_rows_are_needed():
    rng = np.random.default_rng(0)
    s, y = _scores(rng, 40)
    fit = fit_arrays(s, y, settings=LTTSettings(alpha=0.05, delta=0.05))
    assert not fit.feasible and fit.lower is None and fit.upper is None
    assert fit.rows_needed is not None and fit.rows_needed > 40
    assert str(fit.rows_needed) in fit.note
    # a judge no better than chance: no number of rows helps, and the note says so
    y = rng.integers(0, 2, 400)
    fit = fit_arrays(rng.random(400), y, settings=LTTSettings(alpha=0.05, delta=0.05))
    assert not fit.feasible and fit.rows_needed is None and "better judge" in fit.note


def _records(s, y, *, spec="spec1", template="tmpl1", pairs=False):
    return [ScoreRecord(id=f"r{i}", task="fact-check", label=int(label), score=float(score), spec_hash=spec,
                        template_hash=template, model="m", evaluator="FactCheckingEvaluator",
                        unit=f"p{i // 2}" if pairs else f"r{i}")
            for i, (score, label) in enumerate(zip(s, y))]


def test_policy_file_round_trip_and_judge_check(tmp_path):
    rng = np.random.default_rng(11)
    s, y = _scores(rng, 1200)
    paired = fit_policy(_records(s, y, pairs=True), LTTSettings(alpha=ALPHA, delta=DELTA))
    assert paired.n == 1200 and paired.n_units == 600 and paired.unit_size == 2
    policy = fit_policy(_records(s, y), LTTSettings(alpha=ALPHA, delta=DELTA), set_name="synthetic")
    assert policy.feasible and policy.n == 1200 and policy.n_units == 1200 and policy.unit_size == 1
    assert policy.spec_hash == "spec1" and policy.template_hash == "tmpl1" and policy.set == "synthetic"
    assert policy.decide(0.0) == "fail" and policy.decide(1.0) == "pass"
    assert policy.decide((policy.lower + policy.upper) / 2) == "abstain"
    loaded = load_policy(policy.save(tmp_path / "policy.json"))
    assert loaded == policy
    loaded.check(spec_hash="spec1", template_hash="tmpl1")
    with pytest.raises(PolicyMismatchError) as info:
        loaded.check(spec_hash="spec1", template_hash="other")
    assert "tmpl1" in str(info.value) and "other" in str(info.value)
    assert math.isclose(policy.alpha, ALPHA)
