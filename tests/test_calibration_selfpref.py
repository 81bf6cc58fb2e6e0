"""Self-preference: a planted bias is recovered, none is found where there is none."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.calibration import is_self_generator, self_preference


def _verdicts(bias, seed, n=1200):
    rng = np.random.default_rng(seed)
    gens = rng.choice(["google/gemma-2-9b", "meta-llama/Llama-3.1-8B", "openai/gpt-4o"], n)
    labels = rng.integers(0, 2, n)
    is_self = np.char.startswith(gens.astype(str), "google/")
    p = np.where(labels == 1, 0.7, 0.2) + bias * is_self
    return rng.random(n) < p, labels, list(gens)


def test_planted_bias_is_recovered():
    passed, labels, gens = _verdicts(0.2, seed=0, n=6000)
    sp = self_preference(passed, labels, gens, ["google/gemma*"], n_resamples=500, n_permutations=500)
    assert sp.measurable
    assert sp.gap_pos.estimate == pytest.approx(0.2, abs=0.05) and sp.gap_pos.low > 0.1
    assert sp.gap_neg.estimate == pytest.approx(0.2, abs=0.05) and sp.gap_neg.low > 0.1
    assert sp.p_value_pos < 0.01


def test_no_bias_gives_gap_near_zero():
    passed, labels, gens = _verdicts(0.0, seed=1)
    sp = self_preference(passed, labels, gens, ["google/gemma*"], n_resamples=500, n_permutations=500)
    assert abs(sp.gap_pos.estimate) < 0.08
    assert sp.gap_pos.low <= 0.0 <= sp.gap_pos.high
    assert sp.p_value_pos > 0.05


def test_too_few_self_rows_says_so():
    passed, labels, gens = _verdicts(0.0, seed=2, n=300)
    gens = ["meta-llama/x"] * 295 + ["google/gemma"] * 5
    sp = self_preference(passed, labels, gens, ["*gemma*"], n_resamples=100, n_permutations=100)
    assert not sp.measurable
    assert "too few rows" in sp.message


def test_pattern_matching_is_case_insensitive():
    assert is_self_generator("Google/Gemma-2-9B-it", ["google/gemma*"])
    assert is_self_generator("gemini-1.5-flash", ["GEMINI*"])
    assert not is_self_generator("meta-llama/Llama", ["gemma*"])
    assert not is_self_generator(None, ["*"])
