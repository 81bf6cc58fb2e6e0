"""Juries: the combination rules, the jurors in metadata, Fleiss' kappa and the jury report (scripted jurors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgelab.calibration import JuryMeasurement, ScoreRecord, fleiss_kappa, jury_report, measure_jury
from judgelab.calibration.report import jury_document, render_markdown
from judgelab.errors import DataError, ParameterError
from judgelab.evaluators import EvaluationRequest, EvaluationResponse, Jury, combine_scores


class Fixed:
    def __init__(self, scores, model):
        self.scores, self.model_id = scores, model

    def evaluate(self, request):
        s = self.scores[request.response_content]
        return EvaluationResponse(s >= 0.5, s, "fixed", {"model": self.model_id, "prompt_tokens": 7})


def test_mean_logit_and_vote_combine_as_documented():
    texts = ["a", "b", "c"]
    jurors = [Fixed(dict(zip(texts, [0.9, 0.2, 0.6])), "m1"), Fixed(dict(zip(texts, [0.6, 0.4, 0.3])), "m2"),
              Fixed(dict(zip(texts, [0.7, 0.9, 0.2])), "m3")]
    reqs = [EvaluationRequest("d", [], t) for t in texts]
    out = Jury(jurors, names=["m1", "m2", "m3"]).evaluate_many(reqs)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    want = [1 / (1 + math.exp(-np.mean([logit(j.scores[t]) for j in jurors]))) for t in texts]
    assert [r.score for r in out] == pytest.approx(want)
    assert [r.passed for r in out] == [w >= 0.5 for w in want]
    assert [j["score"] for j in out[0].metadata["jurors"]] == [0.9, 0.6, 0.7]
    assert out[0].metadata["prompt_tokens"] == 21
    votes = Jury(jurors, combine="vote").evaluate_many(reqs)
    assert [r.score for r in votes] == pytest.approx([1.0, 1 / 3, 1 / 3]) and [r.passed for r in votes] == [True, False, False]
    scores = np.array([[j.scores[t] for t in texts] for j in jurors])
    assert combine_scores(scores, combine="mean-logit") == pytest.approx(want)
    with pytest.raises(ParameterError, match="at least two jurors"):
        Jury(jurors[:1])
    with pytest.raises(ParameterError, match="'combine'"):
        Jury(jurors, combine="median")


def test_fleiss_kappa_matches_hand_computed_values():
    assert fleiss_kappa([[1, 0, 1, 0], [1, 0, 1, 0]]) == pytest.approx(1.0)
    # yes-counts 2,1,3,0 of 3 raters: mean P_i = 2/3, P_e = 1/2, kappa = 1/3
    assert fleiss_kappa([[1, 1, 1, 0], [1, 0, 1, 0], [0, 0, 1, 0]]) == pytest.approx(1 / 3)
    assert math.isnan(fleiss_kappa([[1, 1], [1, 1]]))


def _records(scores, labels, gens, model):
    return [ScoreRecord(id=f"r{i}", task="fact-check", label=int(y), score=float(s), passed=bool(s >= 0.5),
                        generator=g, model=model, row_hash=f"h{i}") for i, (s, y, g) in enumerate(zip(scores, labels, gens))]


def test_jury_report_compares_the_jury_with_each_member_on_the_same_rows():
    rng = np.random.default_rng(0)
    n = 400
    y = rng.integers(0, 2, n)
    gens = rng.choice(["google/gemini-1.5", "acme/other-7b", "smollm-x"], n)
    own = np.array(["gemini" in g for g in gens])
    a = np.clip(0.5 + (y - 0.5) * 0.6 + rng.normal(0, 0.2, n) + 0.25 * own, 0, 1)  # prefers its family's rows
    b = np.clip(0.5 + (y - 0.5) * 0.4 + rng.normal(0, 0.2, n), 0, 1)
    rep = jury_report([_records(a, y, gens, "judge-a"), _records(b, y, gens, "judge-b")], families=["gemma", "smollm"],
                      self_generators=[["*gemini*"], ["*smollm*"]], n_resamples=200)
    assert set(rep.metrics) == {"jury", "judge-a", "judge-b"} and rep.n == n
    jury = combine_scores(np.vstack([a, b]))
    assert rep.metrics["jury"]["auroc"] == pytest.approx(_auroc(y, jury))
    d = rep.differences["judge-b"]["auroc"]
    assert d.estimate == pytest.approx(rep.metrics["jury"]["auroc"] - rep.metrics["judge-b"]["auroc"])
    assert d.low <= d.estimate <= d.high
    assert -1 <= rep.kappa <= 1
    gemma_a = rep.self_preference["judge-a"]["gemma"]
    assert gemma_a.measurable and gemma_a.gap_pos.estimate > 0.05  # judge a passes gemini's rows more
    assert not rep.self_preference["judge-b"]["gemma"].gap_pos.low > 0.1
    text = "\n".join(rep.lines())
    assert "Fleiss' kappa" in text and "| jury |" in text and "gemma" in text
    with pytest.raises(DataError, match=r"^Stage 2 \(judge-b\) was scored on other rows"):
        jury_report([_records(a, y, gens, "judge-a"), _records(b[:-1], y[:-1], gens[:-1], "judge-b")])


def test_the_jury_is_measured_outside_the_report_and_the_report_renders_the_measurement():
    rng = np.random.default_rng(2)
    n = 200
    y = rng.integers(0, 2, n)
    gens = rng.choice(["google/gemini-1.5", "acme/other-7b"], n)
    a = np.clip(0.5 + (y - 0.5) * 0.6 + rng.normal(0, 0.2, n), 0, 1)
    b = np.clip(0.5 + (y - 0.5) * 0.3 + rng.normal(0, 0.2, n), 0, 1)
    runs = [_records(a, y, gens, "judge-a"), _records(b, y, gens, "judge-b")]
    options = dict(families=["gemma", "smollm"], self_generators=[["*gemini*"], ["*smollm*"]], thresholds=[0.4, 0.6],
                   n_resamples=100)
    measured = measure_jury(runs, **options)
    assert type(measured) is JuryMeasurement and not hasattr(measured, "lines")  # a result, not a renderer
    passed_b = b >= 0.6
    assert measured.metrics["judge-b"]["balanced_accuracy"] == pytest.approx(
        (passed_b[y == 1].mean() + (~passed_b[y == 0]).mean()) / 2)  # the member decides at its own threshold
    assert measured.kappa == pytest.approx(fleiss_kappa(np.vstack([a >= 0.4, passed_b]).astype(int)))
    rep = jury_report(runs, **options)
    assert isinstance(rep, JuryMeasurement) and (rep.metrics, rep.kappa, rep.n) == (measured.metrics, measured.kappa, n)
    assert render_markdown(jury_document(measured)).splitlines() == rep.lines()


def _auroc(y, s):
    from sklearn.metrics import roc_auc_score

    return roc_auc_score(y, s)


def test_cli_jury_writes_the_report(tmp_path, capsys):
    from judgelab.cli import main

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 120)
    gens = rng.choice(["google/gemini-1.5", "acme/other"], 120)
    folders = []
    for k, model in enumerate(("gemma-3-270m", "smollm2-135m")):
        s = np.clip(0.5 + (y - 0.5) * (0.3 + 0.2 * k) + rng.normal(0, 0.2, 120), 0, 1)
        folder = tmp_path / model
        folder.mkdir()
        (folder / "scores.jsonl").write_text("".join(r.model_dump_json(exclude_none=True) + "\n"
                                                     for r in _records(s, y, gens, model)))
        folders.append(str(folder))
    assert main(["jury", *folders, "--combine", "vote", "--resamples", "100", "--out", str(tmp_path / "jury")]) == 0
    text = (tmp_path / "jury" / "jury.md").read_text()
    assert "Jury (vote) of gemma-3-270m, smollm2-135m on 120 rows" in text
    assert "| gemma | smollm |" in text  # the families, from the model specs
