"""The engine's opt-in label mass: the labels' share of the full next-token distribution."""

from __future__ import annotations

import pytest

PROMPT_DOC = "Document: The museum opens at nine and closes at five.\nClaim: The museum opens in the morning.\nAnswer:"


def test_label_mass_reads_the_full_output_layer(judge_model):
    prompt = judge_model.render(PROMPT_DOC)
    plain = judge_model.judge(prompt, ("Yes", "No"))
    assert plain.label_mass is None
    judge_model.label_mass = True
    try:
        with_mass = judge_model.judge(prompt, ("Yes", "No"))
        other = judge_model.judge(judge_model.render("Name a colour."), ("Yes", "No"))
    finally:
        judge_model.label_mass = False
    assert 0.0 < with_mass.label_mass <= 1.0 and 0.0 < other.label_mass <= 1.0
    # a yes/no question puts more of the next token on yes/no than an open request does
    assert with_mass.label_mass > other.label_mass
    # the label distribution is the same as without it (label head vs full layer: within its check)
    assert with_mass.probabilities["Yes"] == pytest.approx(plain.probabilities["Yes"], abs=2e-3)
