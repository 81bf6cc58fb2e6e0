"""Calibrators reduce ECE on miscalibrated scores, save and load, refuse to predict unfitted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.calibration import (
    IsotonicCalibrator,
    NotFittedError,
    PlattCalibrator,
    TemperatureScaling,
    expected_calibration_error,
    load_calibrator,
)
from judgelab.errors import DataError, JudgelabError


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


def test_predict_before_fit_refuses():
    with pytest.raises(NotFittedError, match="not fitted yet"):
        PlattCalibrator().predict(np.array([0.2]))
    assert isinstance(NotFittedError("x"), JudgelabError)


def test_load_calibrator_errors(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"kind": "platt"}))
    with pytest.raises(DataError, match="not a judgelab calibrator"):
        load_calibrator(bad)
    with pytest.raises(DataError, match="Cannot read"):
        load_calibrator(tmp_path / "missing.json")


def test_calibrator_satisfies_the_evaluator_protocol():
    # The evaluators' ScoreCalibrator protocol: predict(scores: ndarray) -> ndarray.
    s, y = _overconfident(200, 4)
    cal = IsotonicCalibrator().fit(s, y)
    out = cal.predict(np.array([0.1, 0.5, 0.9]))
    assert out.shape == (3,) and ((0 <= out) & (out <= 1)).all()
