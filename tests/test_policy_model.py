"""One policy model: a policy is a cascade of one stage, with one band type, one judge check and one held-out method.

``tests/data/policy-0e34c20`` holds a ``policy.json`` (``fit_and_save_policy`` at alpha 0.1 on judge "b",
the weaker judge of ``_two_judges()``, with a dev/test split) and a ``cascade.json`` (``fit_cascade`` +
``heldout_cascade`` at alpha 0.15 on both judges, no split) written by main at commit 0e34c20, before the
policy and the cascade became one model: they must load, and save to the same JSON.
The stages are scripted evaluators (fixed scores): this is decision logic above the engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from judgelab.calibration import (
    CascadeFitOptions,
    LTTSettings,
    Policy,
    ScoreRecord,
    aligned_stages,
    fit_and_save_policy,
    fit_cascade,
    fit_policy,
    heldout_cascade,
    heldout_policy,
    load_cascade,
    load_policy,
)
from judgelab.calibration.policy import fit_arrays, policy_decisions
from judgelab.errors import DataError, ParameterError, PolicyMismatchError
from judgelab.evaluators import Band, Cascade, CascadeBand, CascadePolicy, EvaluationRequest, EvaluationResponse, EvaluatorIdentity, cascade_decisions

OLD = Path(__file__).resolve().parent / "data" / "policy-0e34c20"


class Fixed:
    """A stage that answers each request (by its response text) with a fixed score."""

    def __init__(self, scores: dict[str, float], *, spec_hash: str, template_hash: str) -> None:
        self.scores, self._spec, self.template_hash = scores, spec_hash, template_hash

    def identity(self) -> EvaluatorIdentity:
        return EvaluatorIdentity(self._spec, "fixed")

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        s = self.scores[request.response_content]
        return EvaluationResponse(s >= 0.5, s, "fixed", {"prompt_tokens": 3})


def _records(scores, labels, *, model="m", spec="spec-a", tpl="tpl-a", split=False):
    return [ScoreRecord(id=f"r{i}", task="fact-check", label=int(y), score=float(s), model=model, spec_hash=spec,
                        template_hash=tpl, evaluator="Fixed", prompt_tokens=10, row_hash=f"h{i}",
                        unit=f"p{i // 2}", split=("test" if i % 3 == 0 else "dev") if split else None)
            for i, (s, y) in enumerate(zip(scores, labels))]


def _two_judges(n=300, seed=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.vstack([np.clip(0.5 + (y - 0.5) * k + rng.normal(0, 0.2, n), 0, 1) for k in (0.5, 0.9)])
    return s, y


@pytest.mark.parametrize("name, reader", [("policy.json", load_policy), ("cascade.json", load_cascade)])
def test_files_written_before_the_one_model_load_and_save_unchanged(name, reader, tmp_path):
    original = json.loads((OLD / name).read_text(encoding="utf-8"))
    policy = reader(OLD / name)
    assert policy.version == 1 and policy.task == "fact-check"
    saved = json.loads(policy.save(tmp_path / name).read_text(encoding="utf-8"))
    assert saved == original and list(saved) == list(original)  # same fields, same order


def test_an_old_policy_is_a_cascade_of_one_stage():
    policy = load_policy(OLD / "policy.json")
    assert policy.kind == "policy" and len(policy.stages) == 1 and policy.feasible
    stage = policy.stages[0]
    assert (stage.lower, stage.upper) == (policy.lower, policy.upper) == tuple(policy.bands()[0])
    assert (stage.spec_hash, stage.template_hash, stage.model) == ("sb", "tsb", "b")
    assert load_cascade(OLD / "policy.json") == policy  # the cascade reader takes a one-stage cascade
    cascade = load_cascade(OLD / "cascade.json")
    assert cascade.kind == "cascade" and [s.name for s in cascade.stages] == ["a", "b"]
    assert CascadePolicy is Policy and cascade.abstain_cost > 0


def test_the_one_stage_cascade_decides_as_the_policy():
    policy = load_policy(OLD / "policy.json")
    scores = np.linspace(0, 1, 101)
    texts = [f"t{i}" for i in range(len(scores))]
    stage = Fixed(dict(zip(texts, scores)), spec_hash="sb", template_hash="tsb")
    out = Cascade([stage], policy=policy).evaluate_many([EvaluationRequest("d", ["d"], t) for t in texts])
    assert [r.metadata["decision"] for r in out] == [policy.decide(s) for s in scores]
    assert {"pass", "fail", "abstain"} == {r.metadata["decision"] for r in out}
    assert list(policy_decisions(policy.lower, policy.upper, scores)) == [policy.decide(s) for s in scores]
    assert list(cascade_decisions(policy.bands(), scores)[0]) == [policy.decide(s) for s in scores]
    assert CascadeBand is Band and Band(0.2, 0.8).decide(0.5) == "abstain"


def test_one_judge_check_for_a_policy_and_a_stage():
    policy = load_policy(OLD / "policy.json")
    policy.check(spec_hash="sb", template_hash="tsb")
    with pytest.raises(PolicyMismatchError, match=r"calibrated for another judge than this judge: "
                                                  r"policy template hash tsb, judge template hash other\."):
        policy.check(spec_hash="sb", template_hash="other")
    with pytest.raises(PolicyMismatchError, match=r"^Stage 1 of the cascade \(Fixed\).*"
                                                  r"cascade spec hash sb, stage spec hash sx") as info:
        Cascade([Fixed({}, spec_hash="sx", template_hash="tsb")], policy=policy)
    assert info.value.expected == {"spec_hash": "sb", "template_hash": "tsb"}


def test_a_cascade_of_several_stages_is_not_read_as_one_judge(tmp_path):
    cascade = load_cascade(OLD / "cascade.json")
    with pytest.raises(ParameterError, match="cascade of 2 stages"):
        cascade.lower  # noqa: B018 - the read is the test
    with pytest.raises(DataError, match=r"is a cascade of 2 stages \(a -> b\), not a one-judge policy"):
        load_policy(OLD / "cascade.json")
    doc = json.loads((OLD / "policy.json").read_text(encoding="utf-8"))
    doc["upper"] = "high"
    (tmp_path / "policy.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError, match=r"is not a judgelab policy \(field 'stages.0.upper'"):
        load_policy(tmp_path / "policy.json")


def test_policy_and_cascade_fits_share_one_fit_type():
    s, y = _two_judges()
    one = fit_arrays(s[1], y, settings=LTTSettings(alpha=0.15))
    both = fit_cascade([_records(s[0], y, model="a"), _records(s[1], y, model="b", spec="spec-b")],
                       CascadeFitOptions(alpha=0.15))
    assert type(one).__name__ == "PolicyFit" and one.bands == (Band(one.lower, one.upper),)
    assert one.cost is None and fit_policy(_records(s[1], y), LTTSettings(alpha=0.15)).calibration.model_fields_set == {
        "coverage", "risk", "error", "testing_units", "candidates", "certified"}
    assert {"cost", "decided_share"} <= both.calibration.model_fields_set and both.calibration.risk is None


def test_the_policy_fitters_take_their_settings_as_one_object(tmp_path):
    s, y = _two_judges()
    records = _records(s[1], y)
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        fit_policy(records, alpha=0.15)  # type: ignore[call-arg]  # no hidden parameters
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        fit_arrays(s[1], y, seed=1)  # type: ignore[call-arg]
    with pytest.raises(ParameterError, match="'settings' parameter of fit_policy must be None or an? LTTSettings"):
        fit_policy(records, {"alpha": 0.15})  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="'settings' parameter of fit_and_save_policy must be None or an? LTTSettings"):
        fit_and_save_policy(records, tmp_path / "policy.json", {"alpha": 0.15})  # type: ignore[arg-type]
    assert fit_policy(records).alpha == 0.1 and fit_policy(records, LTTSettings(alpha=0.15)).alpha == 0.15
    saved = fit_and_save_policy(records, tmp_path / "policy.json", LTTSettings(alpha=0.15, seed=2), set_name="s")
    assert (saved.alpha, saved.seed, saved.set) == (0.15, 2, "s") and load_policy(tmp_path / "policy.json").alpha == 0.15


def test_the_cascade_is_held_out_as_the_policy_is_on_a_dev_test_split():
    s, y = _two_judges()
    runs = [_records(s[0], y, model="a", split=True), _records(s[1], y, model="b", spec="spec-b", split=True)]
    n_test = sum(r.split == "test" for r in runs[0])
    policy_held = heldout_policy(runs[1], alpha=0.15, n_resamples=50)
    cascade = fit_cascade(runs, CascadeFitOptions(alpha=0.15))
    held = heldout_cascade(aligned_stages(runs), cascade, n_resamples=50)
    assert policy_held.mode == held.mode == "dev/test split"
    assert policy_held.n == held.n == held.systems["cascade"].n == n_test
    # "b alone" is the policy's method with the cascade's fit: same held-out rows, same decided count
    assert held.systems["b alone"].n == n_test
    assert len(held.systems["cascade"].stage_shares) == 2 and held.systems["cascade"].risk is None
    unsplit = heldout_cascade(aligned_stages([_records(s[0], y, model="a"), _records(s[1], y, model="b")]),
                              cascade, n_resamples=50)
    assert unsplit.mode == "5-fold cross-fitting over units" and unsplit.n == len(y)


def test_a_certified_policy_without_a_fail_threshold_describes_itself():
    doc = json.loads((OLD / "policy.json").read_text(encoding="utf-8"))
    policy = Policy.model_validate({**doc, "lower": None})
    assert policy.feasible and policy.decide(0.0) == "abstain"
    assert policy.describe().startswith(f"never FAIL, PASS at or above {policy.upper:.4f}, ABSTAIN between: ")


def test_a_copy_with_a_stage_field_updates_the_one_stage():
    policy = load_policy(OLD / "policy.json")
    copy = policy.model_copy(update={"spec_hash": "other", "upper": 0.9, "alpha": 0.2})
    assert (copy.spec_hash, copy.stages[0].spec_hash, copy.upper, copy.alpha) == ("other", "other", 0.9, 0.2)
    assert (copy.lower, copy.template_hash) == (policy.lower, policy.template_hash)
    assert policy.spec_hash == "sb"  # the original is unchanged
    with pytest.raises(ParameterError, match="cascade of 2 stages"):
        load_cascade(OLD / "cascade.json").model_copy(update={"upper": 0.9})
