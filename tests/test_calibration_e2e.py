"""End to end with the real embedded model (gemma-3-270m) on a slice of the starter set."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def test_calibrate_starter_slice_with_the_real_model(judge_model, tmp_path):
    from judgelab.calibration import CalibrationOptions, calibrate, read_scores

    res = calibrate(judge_model, out=tmp_path, options=CalibrationOptions(limit=16, n_resamples=100, progress=False))
    recs = read_scores(tmp_path / "scores.jsonl")
    assert len(recs) == 32 and all(r.ok for r in recs)  # 16 fact-check + 16 relevancy
    r = recs[0]
    assert r.model == "gemma-3-270m" and r.spec_hash and set(r.probabilities) == {"Yes", "No"}
    assert 0.0 <= r.score <= 1.0 and r.prompt_tokens > 0
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert set(m["tasks"]) == {"fact-check", "relevancy"}
    assert all(t["headline"].startswith("Ship threshold") for t in m["tasks"].values())
    # self generators come from the model spec
    assert "gemma" in m["meta"]["self_generators"]
    assert res.headline()
