"""CriteriaJudge / CriteriaEvaluator rules on a scripted model (fixed probabilities).

The real-model path is in test_criteria_real.py.
"""

from __future__ import annotations

import pytest

from judgelab.errors import QuestionError
from judgelab.evaluators import (
    CheckCriterion,
    ChoiceCriterion,
    CriteriaEvaluator,
    CriteriaJudge,
    EvaluationRequest,
    Evaluator,
    NoulCriterion,
    Outcome,
    ScoreCriterion,
    Verdict,
    request_state,
)
from judgelab.questions import Choice, Noul, Score

PLAUSIBLE = Noul("Is `assistant_answer` physically plausible?", when_false="Contains an impossible value")
RELEVANT = Noul("Does `assistant_answer` address `user_question`?")
WEATHER = EvaluationRequest("What is the weather in Paris?", response_content="It is -400 degrees.")


def oracle_judge(model) -> CriteriaJudge:
    return (
        CriteriaJudge.builder(model)
        .noul("is_plausible", PLAUSIBLE, 0.7)
        .noul("is_relevant", RELEVANT, 0.5)
        .build()
    )


# -- the oracle -----------------------------------------------------------------


def test_oracle_two_nouls(scripted_model):
    model = scripted_model({"plausible": 0.02, "address": 0.95})
    evaluator = CriteriaEvaluator(oracle_judge(model))
    assert isinstance(evaluator, Evaluator)
    res = evaluator.evaluate(WEATHER)
    assert res.passed is False
    assert res.score == 0.5
    assert "is_plausible" in res.feedback
    assert "is_plausible: Contains an impossible value (scored 0.02, needs at least 0.70)" in res.feedback
    assert "is_relevant" not in res.feedback
    assert res.metadata["findings"] == {"is_plausible": "FAILED", "is_relevant": "PASSED"}
    assert list(res.metadata["findings"]) == ["is_plausible", "is_relevant"]
    verdict = res.metadata["verdict"]
    assert isinstance(verdict, Verdict) and verdict.passed is False
    assert verdict["is_plausible"].answer.probability == pytest.approx(0.02)
    assert res.metadata["criteria"]["is_relevant"] == {"score": pytest.approx(0.95), "outcome": "PASSED"}
    # both questions in one engine call, one prompt each
    assert model.calls == [(2, ("Yes", "No"))]


def test_request_fields_become_the_state(scripted_model):
    req = EvaluationRequest("What is the weather in Paris?", ["Paris is in France.", "   "], "It is -400 degrees.")
    state = request_state(req)
    assert list(state) == ["user_question", "assistant_answer", "supporting_context"]
    assert state["supporting_context"][0] == "Paris is in France."
    assert state["supporting_context"] == ["Paris is in France."]  # blank documents dropped
    assert "supporting_context" not in request_state(WEATHER)  # no evidence: the field is absent

    model = scripted_model({"plausible": 0.9, "address": 0.9})
    CriteriaEvaluator(oracle_judge(model)).evaluate(req)
    assert all("`supporting_context`:\n[1] Paris is in France." in p for p in model.prompts)
    model.prompts.clear()
    CriteriaEvaluator(oracle_judge(model)).evaluate(WEATHER)
    assert not any("`supporting_context`:" in p for p in model.prompts)


def test_judge_keyword_form_matches_evaluator_state(scripted_model):
    model = scripted_model({"plausible": 0.9, "address": 0.2})
    verdict = oracle_judge(model).judge(question="Q?", answer="A.", context=["doc"], locale="fr")
    assert verdict.outcomes == {"is_plausible": "PASSED", "is_relevant": "FAILED"}
    assert "`locale`:\nfr" in model.prompts[0]


# -- outcome rules ----------------------------------------------------------------


@pytest.fixture
def one(scripted_model):
    """Judge one criterion against a scripted model: ``one(criterion, script, **options) -> Verdict``."""

    def judge_one(criterion, script, **options) -> "Verdict":
        return CriteriaJudge(scripted_model(script), [criterion], **options).judge(question="q", answer="a")

    return judge_one


@pytest.mark.parametrize(
    "p, expected", [(0.70, "PASSED"), (0.6999, "FAILED"), (0.5, "FAILED"), (0.9, "PASSED")]
)
def test_noul_passes_iff_p_yes_reaches_minimum(p, expected, one):
    verdict = one(NoulCriterion("n", PLAUSIBLE, 0.7), {"plausible": p})
    assert verdict.outcomes == {"n": expected}
    assert verdict["n"].score == pytest.approx(p)


def test_noul_is_inconclusive_only_with_noul_min_confidence(one):
    crit = NoulCriterion("n", PLAUSIBLE, 0.5)
    assert one(crit, {"plausible": 0.55}).outcomes == {"n": "PASSED"}
    assert one(crit, {"plausible": 0.55}, min_confidence=0.9).outcomes == {"n": "PASSED"}
    assert one(crit, {"plausible": 0.55}, noul_min_confidence=0.8).outcomes == {"n": "INCONCLUSIVE"}
    assert one(crit, {"plausible": 0.25}, noul_min_confidence=0.8).outcomes == {"n": "INCONCLUSIVE"}
    assert one(crit, {"plausible": 0.85}, noul_min_confidence=0.8).outcomes == {"n": "PASSED"}
    assert one(crit, {"plausible": 0.1}, noul_min_confidence=0.8).outcomes == {"n": "FAILED"}


TONE = Choice("What is the tone of `assistant_answer`?", {"formal": "polite", "casual": "relaxed", "rude": "insulting"})


@pytest.mark.parametrize(
    "dist, min_conf, expected",
    [
        ({"formal": 0.3, "casual": 0.2, "rude": 0.5}, 0.5, "PASSED"),  # exactly half on accepted
        ({"formal": 0.3, "casual": 0.19, "rude": 0.51}, 0.5, "FAILED"),
        ({"formal": 0.4, "casual": 0.2, "rude": 0.4}, 0.6, "PASSED"),  # 0.6 supports passing
        ({"formal": 0.35, "casual": 0.2, "rude": 0.45}, 0.6, "INCONCLUSIVE"),  # 0.55 supports passing
        ({"formal": 0.25, "casual": 0.2, "rude": 0.55}, 0.6, "INCONCLUSIVE"),  # 0.55 supports failing
        ({"formal": 0.1, "casual": 0.1, "rude": 0.8}, 0.6, "FAILED"),
    ],
)
def test_choice_rule(dist, min_conf, expected, one):
    crit = ChoiceCriterion("tone", TONE, ("formal", "casual"))
    verdict = one(crit, {"tone": dist}, min_confidence=min_conf)
    assert verdict.outcomes == {"tone": expected}
    answer = verdict["tone"].answer
    assert answer.choice == max(dist, key=dist.get)
    assert answer.confidence == pytest.approx(max(dist.values()))
    assert verdict["tone"].score == pytest.approx(dist["formal"] + dist["casual"])


def test_choice_failure_detail_names_the_choice(one):
    verdict = one(ChoiceCriterion("tone", TONE, ("formal",)), {"tone": {"formal": 0.1, "casual": 0.1, "rude": 0.8}})
    assert verdict.feedback.startswith("tone: Chose 'rude': insulting (0.10 on accepted options formal")


COMPLETE = Score("How complete is `assistant_answer`?", ["nothing", "little", "half", "most", "all"])


@pytest.mark.parametrize(
    "probs, minimum, min_conf, expected",
    [
        ((0.1, 0.1, 0.3, 0.3, 0.2), 2.5, 0.5, "PASSED"),  # levels >= 3 hold exactly 0.5
        ((0.1, 0.1, 0.31, 0.3, 0.19), 2.5, 0.5, "FAILED"),
        ((0.1, 0.1, 0.31, 0.3, 0.19), 2.0, 0.5, "PASSED"),  # ceil(2.0) = 2: 0.8 on passing levels
        ((0.1, 0.1, 0.25, 0.3, 0.25), 3.0, 0.6, "INCONCLUSIVE"),  # 0.55 supports passing
        ((0.0, 0.0, 0.1, 0.2, 0.7), 3.0, 0.6, "PASSED"),
        ((0.6, 0.3, 0.1, 0.0, 0.0), 3.0, 0.6, "FAILED"),
    ],
)
def test_score_rule(probs, minimum, min_conf, expected, one):
    dist = {str(i): p for i, p in enumerate(probs)}
    verdict = one(ScoreCriterion("complete", COMPLETE, minimum), {"complete": dist}, min_confidence=min_conf)
    assert verdict.outcomes == {"complete": expected}
    answer = verdict["complete"].answer
    assert answer.probabilities == pytest.approx(probs)
    assert answer.expected == pytest.approx(sum(i * p for i, p in enumerate(probs)))
    assert answer.level == max(range(5), key=lambda i: probs[i])


def test_check_runs_locally_and_reports_its_defect(scripted_model):
    def boom(state):
        raise RuntimeError("cannot check")

    model = scripted_model({})
    judge = (
        CriteriaJudge.builder(model)
        .check("short", lambda s: len(s["assistant_answer"]) < 10, "The answer is too long")
        .check("has_digit", lambda s: any(c.isdigit() for c in s["assistant_answer"]), "No number given")
        .check("broken", boom, "never shown")
        .check("sloppy", lambda s: "yes", "returns a string")
        .build()
    )
    verdict = judge.judge(question="q", answer="no digits here")
    assert verdict.outcomes == {"short": "FAILED", "has_digit": "FAILED", "broken": "ERROR", "sloppy": "ERROR"}
    assert verdict["short"].detail == "short: The answer is too long"
    assert "RuntimeError: cannot check" in verdict["broken"].detail
    assert "must return True or False" in verdict["sloppy"].detail
    assert model.calls == []  # code checks never reach the model


def test_applies_when_makes_not_applicable_and_skips_the_model(scripted_model):
    model = scripted_model({"plausible": 0.1, "address": 0.9})
    judge = (
        CriteriaJudge.builder(model)
        .noul("is_plausible", PLAUSIBLE, 0.7, applies_when=lambda s: "supporting_context" in s)
        .noul("is_relevant", RELEVANT, 0.5)
        .check("never", lambda s: False, "x", applies_when=lambda s: s["missing_field"])
        .build()
    )
    res = CriteriaEvaluator(judge).evaluate(WEATHER)
    assert res.metadata["findings"] == {"is_plausible": "NOT_APPLICABLE", "is_relevant": "PASSED", "never": "ERROR"}
    assert res.passed is True  # ERROR fails only with fail_on_error
    assert res.score == 0.5  # 1 PASSED of 2 applicable (ERROR lowers the score)
    assert len(model.prompts) == 1 and "address" in model.prompts[0]


def test_passed_and_feedback_with_fail_on_options(scripted_model):
    script = {"plausible": 0.55, "address": 0.95}
    criteria = [NoulCriterion("is_plausible", PLAUSIBLE, 0.5), NoulCriterion("is_relevant", RELEVANT, 0.5),
                CheckCriterion("crash", lambda s: 1 / 0, "x")]
    lenient = CriteriaJudge(scripted_model(script), criteria, noul_min_confidence=0.8)
    v = lenient.judge(question="q", answer="a")
    assert v.outcomes == {"is_plausible": "INCONCLUSIVE", "is_relevant": "PASSED", "crash": "ERROR"}
    assert v.passed and v.feedback == ""
    assert CriteriaEvaluator(lenient).evaluate(WEATHER).score == pytest.approx(1 / 3)

    strict = CriteriaJudge(scripted_model(script), criteria, noul_min_confidence=0.8, fail_on_inconclusive=True)
    v = strict.judge(question="q", answer="a")
    assert not v.passed
    lines = v.feedback.splitlines()
    assert lines[0] == "The following checks were inconclusive:"
    assert lines[1].startswith("- is_plausible: undecided")
    assert "The following checks could not be evaluated:" in lines

    on_error = CriteriaJudge(scripted_model(script), criteria, fail_on_error=True)
    v = on_error.judge(question="q", answer="a")
    assert not v.passed and "ZeroDivisionError" in v.feedback


def test_feedback_lists_failures_then_inconclusive(scripted_model):
    model = scripted_model({"plausible": 0.1, "address": 0.6})
    judge = CriteriaJudge(
        model,
        [NoulCriterion("is_plausible", PLAUSIBLE, 0.7), NoulCriterion("is_relevant", RELEVANT, 0.5)],
        noul_min_confidence=0.7,
    )
    v = judge.judge(question="q", answer="a")
    assert v.feedback.splitlines() == [
        "is_plausible: Contains an impossible value (scored 0.10, needs at least 0.70)",
        "The following checks were inconclusive:",
        "- is_relevant: undecided between yes and no (scored 0.60, needs at least 0.50; confidence 0.60 is below 0.70)",
    ]


def test_no_applicable_criterion_scores_one_when_passed():
    judge = CriteriaJudge(None, [CheckCriterion("c", lambda s: False, "x", applies_when=lambda s: False)])
    res = CriteriaEvaluator(judge).evaluate(WEATHER)
    assert res.passed and res.score == 1.0 and res.metadata["findings"] == {"c": "NOT_APPLICABLE"}


def test_engine_error_is_one_finding_and_keeps_the_rest(scripted_model):
    model = scripted_model({"plausible": 0.9, "address": 0.9, "HUGE": 0.9}, too_long="HUGE")
    judge = (
        CriteriaJudge.builder(model)
        .noul("is_plausible", PLAUSIBLE, 0.7)
        .noul("huge", Noul("HUGE question about `assistant_answer`"))
        .noul("is_relevant", RELEVANT, 0.5)
        .build()
    )
    v = judge.judge(question="q", answer="a")
    assert v.outcomes == {"is_plausible": "PASSED", "huge": "ERROR", "is_relevant": "PASSED"}
    assert "ContextLengthError" in v["huge"].detail and "99999" in v["huge"].detail


def test_many_requests_go_to_the_engine_together(scripted_model):
    model = scripted_model({"plausible": 0.9, "address": 0.3})
    evaluator = CriteriaEvaluator(oracle_judge(model))
    results = evaluator.evaluate_many([WEATHER, EvaluationRequest("Q2?", response_content="A2.")])
    assert [r.metadata["findings"]["is_relevant"] for r in results] == ["FAILED", "FAILED"]
    assert model.calls == [(4, ("Yes", "No"))]


# -- construction -------------------------------------------------------------


def test_builder_and_constructor_build_the_same_judge(scripted_model):
    model = scripted_model({})
    check = lambda s: True  # noqa: E731
    built = (
        CriteriaJudge.builder(model)
        .noul("a", PLAUSIBLE, 0.7)
        .choice("b", TONE, "formal", "casual")
        .score("c", COMPLETE, 3)
        .check("d", check, "bad")
        .min_confidence(0.6)
        .fail_on_inconclusive(False)
        .fail_on_error(False)
        .build()
    )
    direct = CriteriaJudge(
        model,
        [NoulCriterion("a", PLAUSIBLE, 0.7), ChoiceCriterion("b", TONE, ("formal", "casual")),
         ScoreCriterion("c", COMPLETE, 3), CheckCriterion("d", check, "bad")],
        min_confidence=0.6,
    )
    assert built.criteria == direct.criteria
    assert built.rules == direct.rules


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda model: Noul(), "instructions or criteria"),
        (lambda model: Noul("  "), "instructions or criteria"),
        (lambda model: Choice("q", {"only": ""}), "at least 2 options"),
        (lambda model: Score("q", ["one"]), "2 to 10 levels"),
        (lambda model: Score("q", [str(i) for i in range(11)]), "2 to 10 levels"),
        (lambda model: ChoiceCriterion("c", TONE, ("polite",)), r"\['polite'\] are not options"),
        (lambda model: ChoiceCriterion("c", TONE, ()), "name the accepted options"),
        (lambda model: ScoreCriterion("c", COMPLETE, 5), r"level in \[0, 4\]"),
        (lambda model: NoulCriterion("c", PLAUSIBLE, 1.5), r"probability in \[0, 1\]"),
        (lambda model: CriteriaJudge(model({}), [NoulCriterion("x", PLAUSIBLE), NoulCriterion("x", RELEVANT)]), "named 'x'"),
        (lambda model: CriteriaJudge(None, [NoulCriterion("x", PLAUSIBLE)]), "no model was given"),
        (lambda model: CriteriaJudge(model({}), [NoulCriterion("x", PLAUSIBLE)], min_confidence=2), "min_confidence"),
        (lambda model: CriteriaJudge(model({}), []), "at least one criterion"),
    ],
)
def test_bad_definitions_are_refused_with_a_clear_message(make, match, scripted_model):
    with pytest.raises(QuestionError, match=match):
        make(scripted_model)


def test_state_must_be_a_mapping(scripted_model):
    judge = oracle_judge(scripted_model({}))
    with pytest.raises(QuestionError, match="mapping"):
        judge.judge_state(["not", "a", "mapping"])


def test_verdict_to_dict_is_json_ready(scripted_model):
    import json

    model = scripted_model({"plausible": 0.02, "address": 0.95})
    res = CriteriaEvaluator(oracle_judge(model)).evaluate(WEATHER)
    data = json.loads(json.dumps(res.metadata["verdict"].to_dict()))
    assert data["findings"][0]["outcome"] == "FAILED"
    assert data["findings"][0]["answer"]["probability"] == pytest.approx(0.02)
    assert Outcome("FAILED") is Outcome.FAILED
