"""Calibrators reduce ECE on miscalibrated scores, save and load, refuse to predict unfitted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.calibration import IsotonicCalibrator, NotFittedError, PlattCalibrator, TemperatureScaling, expected_calibration_error, load_calibrator
from judgelab.errors import DataError


def _overconfident(n, seed):
    """True P(y=1) = sigmoid(z); the judge reports sigmoid(3 z) (overconfident)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 1.5, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return 1 / (1 + np.exp(-3 * z)), y


@pytest.mark.parametrize("cls", [TemperatureScaling, PlattCalibrator, IsotonicCalibrator])
def test_calibrator_reduces_ece_on_held_out_rows(cls, tmp_path):
    s_fit, y_fit = _overconfident(3000, 0)
    s_test, y_test = _overconfident(3000, 1)
    cal = cls().fit(s_fit, y_fit)
    before = expected_calibration_error(y_test, s_test)
    after = expected_calibration_error(y_test, cal.predict(s_test))
    assert after < before / 2, (before, after)
    # round trip through JSON gives the same predictions
    path = cal.save(tmp_path / "cal.json")
    again = load_calibrator(path)
    np.testing.assert_allclose(again.predict(s_test), cal.predict(s_test))
    assert type(again) is cls


def test_temperature_recovers_known_temperature():
    s, y = _overconfident(20000, 3)
    assert TemperatureScaling().fit(s, y).temperature_ == pytest.approx(3.0, rel=0.1)


@pytest.mark.parametrize("cls", [TemperatureScaling, PlattCalibrator, IsotonicCalibrator])
def test_predict_before_fit_refuses(cls, tmp_path):
    with pytest.raises(NotFittedError, match="not fitted yet"):
        cls().predict(np.array([0.2]))
    with pytest.raises(NotFittedError, match="nothing to save"):
        cls().save(tmp_path / "cal.json")
    assert not (tmp_path / "cal.json").exists()
    s, y = _overconfident(200, 5)
    assert cls().fit(s, y).predict(np.array([0.2])).shape == (1,)  # the same object predicts once fitted


def test_load_calibrator_errors(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"kind": "platt"}))
    with pytest.raises(DataError, match="not a judgelab calibrator"):
        load_calibrator(bad)
    with pytest.raises(DataError, match="Cannot read"):
        load_calibrator(tmp_path / "missing.json")


def test_calibrator_satisfies_the_evaluator_protocol(judge_model):
    # The evaluators' ScoreCalibrator protocol: an evaluator given a fitted calibrator reports
    # calibrated scores, predict(raw), and keeps the raw score beside it.
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    s, y = _overconfident(200, 4)
    cal = PlattCalibrator().fit(s, y)
    raw_ev, cal_ev = FactCheckingEvaluator(judge_model), FactCheckingEvaluator(judge_model, calibrator=cal)
    req = EvaluationRequest(user_text="", data_list=["The meeting is on Monday."], response_content="The meeting is on Monday.")
    raw, calibrated = raw_ev.evaluate(req), cal_ev.evaluate(req)
    expected = float(cal.predict(np.array([raw.score]))[0])
    assert calibrated.score == pytest.approx(expected, abs=1e-9)
    assert calibrated.metadata["raw_score"] == pytest.approx(raw.score, abs=1e-9)
    assert abs(expected - raw.score) > 1e-3  # the calibrator moved the score, so the check above means something
