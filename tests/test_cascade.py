"""Cascades of judges: the joint Learn-then-Test fit, the Cascade evaluator, cascade.json and bad input.

The stages here are scripted evaluators (fixed scores per request): this is
aggregation logic above the engine. The real judges are in
test_cascade_real.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from judgelab.calibration import (
    CalibrationOptions,
    CascadeFitOptions,
    ScoreRecord,
    aligned_stages,
    cascade_decisions,
    fit_cascade,
    fit_cascade_arrays,
    load_cascade,
)
from judgelab.cli import main
from judgelab.errors import DataError, ParameterError, PolicyMismatchError
from judgelab.evaluators import Cascade, CascadeBand, EvaluationRequest, EvaluationResponse, EvaluatorIdentity, build_evaluator


class Scripted:
    """A stage that answers each request (by its response text) with a fixed score; counts what it saw."""

    def __init__(self, scores: dict[str, float], *, spec_hash: str = "spec-a", template_hash: str = "tpl-a",
                 tokens: int = 10) -> None:
        self.scores, self.seen, self.tokens = scores, [], tokens
        self._spec_hash, self.template_hash = spec_hash, template_hash

    def identity(self) -> EvaluatorIdentity:
        return EvaluatorIdentity(self._spec_hash, "scripted")

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        self.seen.append(request.response_content)
        s = self.scores[request.response_content]
        return EvaluationResponse(s >= 0.5, s, "scripted", {"prompt_tokens": self.tokens, "model": "scripted"})


def _synth(rng, n, *, sep1=0.25, sep2=0.7):
    """Two stages on the same rows: a weak cheap one and a stronger dear one."""
    y = rng.integers(0, 2, n)
    s1 = np.clip(0.5 + (y - 0.5) * sep1 + rng.normal(0, 0.2, n), 0, 1)
    s2 = np.clip(0.5 + (y - 0.5) * sep2 + rng.normal(0, 0.2, n), 0, 1)
    return np.vstack([s1, s2]), y


def _error(bands, s, y):
    """Error among decided rows and coverage of a cascade, computed here without judgelab."""
    open_ = np.ones(len(y), dtype=bool)
    wrong = decided = 0
    for (lower, upper), sk in zip(bands, s):
        fail = open_ & (sk < (-np.inf if lower is None else lower))
        pas = open_ & ~fail & (sk >= (np.inf if upper is None else upper))
        wrong += int((fail & (y == 1)).sum() + (pas & (y == 0)).sum())
        decided += int(fail.sum() + pas.sum())
        open_ &= ~(fail | pas)
    return (wrong / decided if decided else 0.0), decided / len(y)


def test_the_fitted_cascade_keeps_its_error_bound_on_500_splits():
    rng = np.random.default_rng(7)
    s_pop, y_pop = _synth(rng, 40_000)  # the population: the true risk of a configuration, to about 0.3%
    alpha, delta, trials = 0.1, 0.1, 500
    opts = CascadeFitOptions(alpha=alpha, delta=delta, costs=(1.0, 8.0), max_grid=12, seed=None)
    violations, coverage, certified = 0, [], 0
    for _ in range(trials):
        idx = rng.integers(0, len(y_pop), 400)
        fit = fit_cascade_arrays(s_pop[:, idx], y_pop[idx], options=opts)
        if not fit.feasible:
            continue
        certified += 1
        err, cov = _error(fit.bands, s_pop, y_pop)
        violations += err > alpha
        coverage.append(cov)
    bound = stats.binom.ppf(0.999, trials, delta)  # P(violation) <= delta per split
    print(f"violations {violations} of {certified} certified fits (bound {bound:.0f})")
    assert violations <= bound, (violations, bound)
    assert certified > 0.8 * trials and np.mean(coverage) > 0.5, (certified, np.mean(coverage))  # not vacuous


def test_one_unit_is_an_uncertified_fit_that_says_why():
    """All rows in one unit leave nothing to test once the unit orders the candidates: no crash, no bands."""
    rng = np.random.default_rng(0)
    s, y = _synth(rng, 40)
    fit = fit_cascade_arrays(s, y, units=np.zeros(len(y), dtype=int))
    assert not fit.feasible
    assert fit.bands == ((None, None), (None, None))  # every stage abstains
    assert "at least 2 units" in fit.note and "40 rows in 1 unit" in fit.note
    assert fit_cascade_arrays(s, y, units=np.arange(len(y)) // 20).n_units == 2  # two units: fitted as usual


def test_escalating_nothing_is_stage_one_and_everything_is_stage_two():
    texts = [f"r{i}" for i in range(6)]
    one = Scripted(dict(zip(texts, [0.1, 0.4, 0.6, 0.9, 0.5, 0.49])))
    two = Scripted(dict(zip(texts, [0.8, 0.2, 0.3, 0.7, 0.55, 0.1])))
    reqs = [EvaluationRequest("doc", ["doc"], t) for t in texts]
    nothing = Cascade([one, two], bands=[(0.5, 0.5), (0.5, 0.5)]).evaluate_many(reqs)
    assert not two.seen
    assert [(r.passed, r.score) for r in nothing] == [(one.scores[t] >= 0.5, one.scores[t]) for t in texts]
    assert {r.metadata["decided_by"] for r in nothing} == {1}
    one.seen.clear()
    everything = Cascade([one, two], bands=[CascadeBand(None, None), CascadeBand(0.5, 0.5)]).evaluate_many(reqs)
    assert [(r.passed, r.score) for r in everything] == [(two.scores[t] >= 0.5, two.scores[t]) for t in texts]
    assert {r.metadata["decided_by"] for r in everything} == {2}
    assert everything[0].metadata["cascade"]["prompt_tokens"] == 20


def test_the_evaluator_decides_as_the_fit_does_and_records_every_stage():
    rng = np.random.default_rng(3)
    s, _ = _synth(rng, 200)
    texts = [f"r{i}" for i in range(200)]
    stages = [Scripted(dict(zip(texts, s[0]))), Scripted(dict(zip(texts, s[1])), tokens=50)]
    bands = [(0.35, 0.65), (0.45, 0.55)]
    out = Cascade(stages, bands=bands, names=["cheap", "dear"]).evaluate_many(
        [EvaluationRequest("d", [], t) for t in texts])
    dec, stage = cascade_decisions(bands, s)
    assert [r.metadata["decision"] for r in out] == list(dec)
    assert [r.metadata["decided_by"] for r in out] == [None if k < 0 else k + 1 for k in stage]
    assert len(stages[1].seen) == int(((s[0] >= 0.35) & (s[0] < 0.65)).sum())
    escalated = next(r for r, k in zip(out, stage) if k == 1)
    meta = escalated.metadata["cascade"]
    assert [m["name"] for m in meta["stages"]] == ["cheap", "dear"] and meta["prompt_tokens"] == 60
    abstained = [r for r in out if r.metadata["decision"] == "abstain"]
    assert abstained and not any(r.passed for r in abstained)


def test_the_cheaper_cascade_is_chosen_when_both_meet_the_bound():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 600)
    perfect = np.where(y == 1, 0.9, 0.1) + rng.uniform(-0.05, 0.05, 600)
    s = np.vstack([perfect, perfect[::-1] * 0 + perfect])  # both stages decide every row rightly
    fit = fit_cascade_arrays(s, y, options=CascadeFitOptions(alpha=0.05, delta=0.1, costs=(1.0, 10.0)))
    assert fit.feasible and fit.decided_share == (1.0, 0.0) and fit.cost == pytest.approx(1.0)
    noisy = np.clip(0.5 + (y - 0.5) * 0.2 + rng.normal(0, 0.2, 600), 0, 1)
    fit2 = fit_cascade_arrays(np.vstack([noisy, perfect]), y, options=CascadeFitOptions(alpha=0.05, costs=(1.0, 10.0)))
    assert fit2.feasible and fit2.decided_share[1] > 0.3 and fit2.coverage == pytest.approx(1.0)
    assert 1.0 < fit2.cost < 11.0  # some rows stop at the cheap stage, some go on


def _records(scores, labels, *, model, spec="spec-a", tpl="tpl-a", ids=None, tokens=10, content="c"):
    ids = ids or [f"row-{i}" for i in range(len(labels))]
    return [ScoreRecord(id=i, task="fact-check", label=int(y), score=float(s), passed=bool(s >= 0.5), model=model,
                        spec_hash=spec, template_hash=tpl, prompt_tokens=tokens, row_hash=f"{content}-{i}",
                        evaluator="Scripted") for i, s, y in zip(ids, scores, labels)]


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(5)
    s, y = _synth(rng, 600, sep1=0.5, sep2=0.9)
    return s, y, [_records(s[0], y, model="cheap", tokens=10),
                  _records(s[1], y, model="dear", spec="spec-b", tpl="tpl-b", tokens=80)]


def test_cascade_json_round_trips_and_binds_to_matching_stages(runs, tmp_path):
    s, y, recs = runs
    policy = fit_cascade(recs, CascadeFitOptions(alpha=0.15, delta=0.1))
    assert [st.name for st in policy.stages] == ["cheap", "dear"] and [st.cost for st in policy.stages] == [10, 80]
    assert policy.feasible and policy.n == 600 and policy.stages[1].spec_hash == "spec-b"
    loaded = load_cascade(policy.save(tmp_path / "cascade.json"))
    assert loaded == policy
    texts = [r.id for r in recs[0]]
    stages = [Scripted(dict(zip(texts, s[0]))), Scripted(dict(zip(texts, s[1])), spec_hash="spec-b", template_hash="tpl-b")]
    out = Cascade(stages, policy=loaded).evaluate_many([EvaluationRequest("d", [], t) for t in texts])
    dec, _ = cascade_decisions(loaded.bands(), s)
    assert [r.metadata["decision"] for r in out] == list(dec)
    assert out[0].metadata["policy"]["alpha"] == 0.15


def test_a_stage_whose_hashes_differ_is_refused_by_name(runs):
    s, y, recs = runs
    policy = fit_cascade(recs, CascadeFitOptions(alpha=0.15))
    wrong = [Scripted({}), Scripted({}, spec_hash="spec-b", template_hash="other")]
    with pytest.raises(PolicyMismatchError, match=r"^Stage 2 of the cascade \(Scripted\).*template hash tpl-b") as e:
        Cascade(wrong, policy=policy)
    assert "\n" not in str(e.value)
    with pytest.raises(PolicyMismatchError, match="fitted for 2 stages"):
        Cascade([Scripted({})], policy=policy)


def test_bad_cascades_are_refused_naming_the_stage(runs):
    s, y, recs = runs
    with pytest.raises(DataError, match="at least one stage"):
        aligned_stages([])
    with pytest.raises(ParameterError, match="at least one stage"):
        Cascade([], bands=[])
    with pytest.raises(DataError, match=r"^Stage 2 \(dear\) was scored on other rows"):
        fit_cascade([recs[0], recs[1][:-3]])
    other_set = _records(s[1], y, model="dear", content="other")
    with pytest.raises(DataError, match=r"^Stage 2 \(dear\) scored row 'row-0' with other content"):
        fit_cascade([recs[0], other_set])
    with pytest.raises(ParameterError, match="2 costs for 3 stages|3 stages"):
        fit_cascade([recs[0], recs[1], recs[1]], CascadeFitOptions(costs=(1.0, 2.0)))


def _write_run(folder, records):
    folder.mkdir(parents=True)
    (folder / "scores.jsonl").write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in records))
    return str(folder)


def test_cli_fit_writes_cascade_json_and_report(runs, tmp_path, capsys):
    s, y, recs = runs
    a, b = _write_run(tmp_path / "a", recs[0]), _write_run(tmp_path / "b", recs[1])
    out = tmp_path / "out"
    assert main(["cascade", "fit", a, b, "--alpha", "0.15", "--resamples", "200", "--out", str(out)]) == 0
    doc = json.loads((out / "cascade.json").read_text())
    assert doc["kind"] == "cascade" and doc["method"].startswith("learn-then-test") and doc["n"] == 600
    assert {"lower", "upper", "spec_hash", "template_hash", "cost"} <= set(doc["stages"][0])
    held = doc["heldout"]["systems"]
    assert set(held) == {"cascade", "cheap alone", "dear alone"}
    assert held["cascade"]["cost"]["estimate"] < held["dear alone"]["cost"]["estimate"] + 10
    report = (out / "cascade.md").read_text()
    assert "| cascade |" in report and (out / "cascade.png").is_file()
    c = _write_run(tmp_path / "c", recs[1][:-3])
    assert main(["cascade", "fit", a, c, "--out", str(out)]) == 2
    notes = "no metrics.json beside"  # load_run's note for a bare scores.jsonl (one per run, both calls)
    err = [line for line in capsys.readouterr().err.strip().splitlines() if notes not in line]
    assert len(err) == 1 and "Stage 2 (dear) was scored on other rows" in err[0]


def test_the_registry_builds_a_cascade_from_a_fitted_one(runs):
    s, y, recs = runs
    with pytest.raises(ParameterError, match="needs policy="):
        build_evaluator("cascade", None)


class Hashed:
    """A stage whose score is a fixed function of the claim's text (no model)."""

    def __init__(self, salt: str, spec_hash: str) -> None:
        self.salt, self.template_hash, self._spec = salt, f"tpl-{salt}", spec_hash

    def identity(self) -> EvaluatorIdentity:
        return EvaluatorIdentity(self._spec, self.salt)

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        import hashlib

        h = int(hashlib.sha256((self.salt + request.response_content).encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return EvaluationResponse(h >= 0.5, h, "hashed", {"prompt_tokens": 5})


def test_calibrate_and_gate_take_a_cascade_like_any_evaluator(tmp_path):
    from pathlib import Path

    from judgelab.calibration import calibrate, gate, read_scores

    starter = Path(__file__).resolve().parents[1] / "calibration" / "starter.jsonl"
    cascade = Cascade([Hashed("a", "spec-a"), Hashed("b", "spec-b")], bands=[(0.2, 0.8), (0.5, 0.5)])
    result = calibrate("gemma-3-270m", starter, tmp_path / "run", task=["fact-check"], evaluators={"fact-check": cascade},
                       # every row is scored by the cascade: no model loads
                       options=CalibrationOptions(n_resamples=50, figures=False, progress=False))
    records = read_scores(result.files["scores"] if "scores" in result.files else tmp_path / "run" / "scores.jsonl")
    assert records and {r.evaluator for r in records} == {"Cascade"}
    assert {r.template_hash for r in records} == {cascade.template_hash}
    assert all(r.prompt_tokens in (5, 10) for r in records)
    assert gate(records, records).passed


def test_serve_refuses_a_file_that_is_not_a_cascade_before_loading_a_model(tmp_path, capsys):
    bad = tmp_path / "cascade.json"
    bad.write_text(json.dumps({"kind": "cascade", "stages": []}))
    assert main(["serve", "--cascade", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a judgelab cascade" in err[0]


def test_the_cascade_module_exports_what_it_defines():
    namespace: dict = {}
    exec("from judgelab.evaluators.cascade import *", namespace)
    assert {"Cascade", "CascadeBand", "stage_name", "stage_template_hash"} <= namespace.keys()


def test_cascade_at_file_reads_through_the_one_validated_reader(runs, tmp_path):
    s, y, recs = runs
    path = fit_cascade(recs, CascadeFitOptions(alpha=0.15)).save(tmp_path / "cascade.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["stages"][1]["lower"] = "low"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError, match=r"is not a judgelab cascade \(field 'stages.1.lower'") as e:
        build_evaluator(f"cascade@{path}", None, stage_models=[Scripted({}), Scripted({})])
    assert "judgelab cascade fit" in str(e.value)
