"""Typed questions, criteria, rubrics and self-refine on the real gemma-3-270m judge.

gemma-3-270m is a weak judge: these tests check mechanics (distributions,
rules applied to what the model answered, prompts, prefix sharing), never
that its answers are right.
"""

from __future__ import annotations

import pytest

from judgelab.evaluators import CriteriaEvaluator, CriteriaJudge, EvaluationRequest, Outcome, RubricEvaluator, SelfRefine
from judgelab.questions import Choice, ChoiceAnswer, Noul, NoulAnswer, Score, ScoreAnswer, ask, ask_all, prepare

STATE = {
    "user_question": "What is the capital of France?",
    "assistant_answer": "Paris.",
    "supporting_context": ["Paris is the capital of France."],
}
GROUNDED = Noul(
    "Is every claim in `assistant_answer` supported by `supporting_context`?",
    when_false="Introduces facts the context does not support",
)
TONE = Choice("What is the tone of `assistant_answer`?", {"formal": "polite", "casual": "relaxed", "rude": "insulting"})
CITY = Choice("Which city does `assistant_answer` name?", {"Paris": "", "London": "", "New York City": ""})
COMPLETE = Score("How complete is `assistant_answer`?", ["missing", "partial", "complete"])


def test_nouls_choices_and_scores_are_answered(judge_model):
    noul, tone, city, score = ask_all(judge_model, [(STATE, q) for q in (GROUNDED, TONE, CITY, COMPLETE)])

    assert isinstance(noul, NoulAnswer) and 0.0 < noul.probability < 1.0
    assert noul.prompt_tokens > 0

    assert isinstance(tone, ChoiceAnswer)
    assert tone.read_as == ("formal", "casual", "rude")  # single-token labels are read directly
    assert sum(tone.probabilities.values()) == pytest.approx(1.0)
    assert tone.choice == max(tone.probabilities, key=tone.probabilities.get)
    assert tone.confidence == pytest.approx(tone.probabilities[tone.choice])

    assert city.read_as == ("A", "B", "C")  # "New York City" is not one token: letters are read
    assert list(city.probabilities) == ["Paris", "London", "New York City"]
    assert sum(city.probabilities.values()) == pytest.approx(1.0)

    assert isinstance(score, ScoreAnswer) and len(score.probabilities) == 3
    assert sum(score.probabilities) == pytest.approx(1.0)
    assert score.expected == pytest.approx(sum(i * p for i, p in enumerate(score.probabilities)))
    assert 0.0 <= score.expected <= 2.0

    # asked alone, the same question reads the same labels from the same prompt; the
    # engine's results do not depend on what was batched or cached with it
    alone = ask(judge_model, STATE, GROUNDED)
    assert alone.probability == pytest.approx(noul.probability, abs=1e-4)
    assert alone.prompt_tokens == noul.prompt_tokens


def test_questions_over_one_state_share_its_prefix(judge_model):
    backend = judge_model.backend
    state = {
        "assistant_answer": " ".join(f"Item {i} weighs {i * 3} grams and is coloured shade {i}." for i in range(20)),
    }
    questions = [
        Noul("Does `assistant_answer` mention item 7?"),
        Noul("Is every weight in `assistant_answer` positive?"),
        Noul("Is `assistant_answer` written in English?"),
    ]
    prompts = [prepare(judge_model, state, q).prompt for q in questions]
    tokens = [judge_model.tokenize(p) for p in prompts]
    state_tokens = judge_model.count_tokens(state["assistant_answer"])
    assert state_tokens > 150

    before = backend.tokens_evaluated
    ask_all(judge_model, [(state, q) for q in questions])
    evaluated = backend.tokens_evaluated - before

    unshared = sum(len(t) for t in tokens)
    # the state is prefilled once; only the questions after it are paid for again
    assert evaluated < unshared - 1.5 * state_tokens, (evaluated, unshared, state_tokens)


def test_one_ask_all_over_many_states_decodes_no_more_than_one_call_per_state(judge_model):
    # issue 16 item 1: batching across states keeps each state's prefix shared by
    # all its questions, so one batch is never more work than the calls one by one
    states = [
        {"assistant_answer": " ".join(f"Crate {s}-{i} holds {i * s + 3} bolts of size {i}." for i in range(12))}
        for s in range(4)
    ]
    questions = [
        Noul("Does `assistant_answer` mention crate 7?"),
        Noul("Is every count in `assistant_answer` positive?"),
        Noul("Is `assistant_answer` written in English?"),
        TONE,
        Score("How tidy is `assistant_answer`?", ["messy", "fair", "tidy"]),
    ]
    backend = judge_model.backend

    def decoded(calls):
        judge_model.reset_caches()
        before = backend.tokens_evaluated
        answers = [a for items in calls for a in ask_all(judge_model, items)]
        return backend.tokens_evaluated - before, answers

    batched, together = decoded([[(s, q) for s in states for q in questions]])
    separate, one_by_one = decoded([[(s, q) for q in questions] for s in states])

    assert batched <= separate, (batched, separate)
    assert batched > 0
    # the same answers either way
    for a, b in zip(together, one_by_one):
        assert type(a) is type(b)
        assert a.prompt_tokens == b.prompt_tokens


def test_criteria_evaluator_on_the_real_model(judge_model):
    judge = (
        CriteriaJudge.builder(judge_model)
        .noul("is_plausible", Noul("Is `assistant_answer` physically plausible?", when_false="Contains an impossible value"), 0.7)
        .noul("is_relevant", Noul("Does `assistant_answer` answer `user_question`?"), 0.5)
        .build()
    )
    res = CriteriaEvaluator(judge).evaluate(
        EvaluationRequest("What is the weather in Paris?", response_content="It is -400 degrees.")
    )
    verdict = res.metadata["verdict"]
    minimums = {"is_plausible": 0.7, "is_relevant": 0.5}
    for finding in verdict.findings:
        p = finding.answer.probability
        assert 0.0 < p < 1.0
        assert finding.outcome == (Outcome.PASSED if p >= minimums[finding.name] else Outcome.FAILED)
    assert list(res.metadata["findings"]) == ["is_plausible", "is_relevant"]
    assert res.score == sum(f.outcome is Outcome.PASSED for f in verdict.findings) / 2
    assert res.passed == (res.score == 1.0)
    assert (res.feedback == "") == res.passed
    assert res.metadata["model"] == "gemma-3-270m" and res.metadata["prompt_tokens"] > 0


def test_choice_and_score_criteria_follow_their_rules_on_the_real_model(judge_model):
    judge = (
        CriteriaJudge.builder(judge_model)
        .choice("tone", TONE, "formal", "casual")
        .score("complete", COMPLETE, 1.5)
        .check("short", lambda s: len(s["assistant_answer"]) < 40, "The answer is too long")
        .noul("grounded", GROUNDED, 0.7, applies_when=lambda s: "reference" in s)
        .min_confidence(0.6)
        .build()
    )
    verdict = judge.judge_state(STATE)
    tone, complete, short, grounded = verdict.findings
    share = tone.answer.probabilities["formal"] + tone.answer.probabilities["casual"]
    support = share if share >= 0.5 else 1 - share
    assert tone.outcome == (
        Outcome.INCONCLUSIVE if support < 0.6 else Outcome.PASSED if share >= 0.5 else Outcome.FAILED
    )
    high = complete.answer.probabilities[2]  # ceil(1.5) = 2
    support = high if high >= 0.5 else 1 - high
    assert complete.outcome == (
        Outcome.INCONCLUSIVE if support < 0.6 else Outcome.PASSED if high >= 0.5 else Outcome.FAILED
    )
    assert short.outcome is Outcome.PASSED
    assert grounded.outcome is Outcome.NOT_APPLICABLE
    assert verdict.passed == (Outcome.FAILED not in (tone.outcome, complete.outcome))


def _faithfulness_request() -> EvaluationRequest:
    return EvaluationRequest(
        "How tall is the Eiffel Tower?", ["The Eiffel Tower is 330 metres tall."], "It is 330 metres tall."
    )


def test_rubric_prompt_has_flow_judge_layout(judge_model):
    ev = RubricEvaluator.preset(judge_model, "faithfulness-3point")
    text = ev.user_prompt(_faithfulness_request())
    order = ["# GOAL", "# INPUT", "<query>\nHow tall", "<context>\nThe Eiffel", "# OUTPUT",
             "<response>\nIt is 330", "# EVALUATION CRITERIA AND SCORING RUBRIC", "- Score 1:", "- Score 2:",
             "- Score 3:", "<feedback>", "<score>"]
    positions = [text.index(s) for s in order]
    assert positions == sorted(positions)
    no_inputs = ev.user_prompt(EvaluationRequest("", response_content="Just an output."))
    assert "# INPUT" not in no_inputs and "<response>\nJust an output." in no_inputs
    correctness = RubricEvaluator.preset(judge_model, "correctness-5point")
    assert "<reference_answer>\nThe Eiffel" in correctness.user_prompt(_faithfulness_request())


def test_rubric_fast_mode_reads_the_score_distribution(judge_model):
    ev = RubricEvaluator.preset(judge_model, "faithfulness-3point")
    res = ev.evaluate(_faithfulness_request())
    probs = res.metadata["probabilities"]
    assert list(probs) == ["1", "2", "3"] and sum(probs.values()) == pytest.approx(1.0)
    expected = sum(int(s) * p for s, p in probs.items())
    assert res.metadata["expected"] == pytest.approx(expected)
    assert res.score == pytest.approx((expected - 1) / 2)
    assert res.passed == (expected >= 2.0)
    assert res.feedback.startswith("Score distribution: 1: ")
    assert res.metadata["model_feedback"] is None and res.metadata["rubric"] == "faithfulness-3point"


def test_rubric_explained_mode_writes_bounded_feedback_first(judge_model):
    ev = RubricEvaluator(
        judge_model,
        "Is the response polite?",
        [(0, "Rude."), (1, "Polite.")],
        0.5,
        mode="explained",
        max_feedback_tokens=12,
    )
    res = ev.evaluate(EvaluationRequest("Say hello.", response_content="Hello, nice to meet you."))
    feedback = res.metadata["model_feedback"]
    assert isinstance(feedback, str) and judge_model.count_tokens(feedback) <= 12
    assert "</feedback>" not in feedback
    assert res.feedback == (feedback.strip() or res.metadata["distribution"])
    probs = res.metadata["probabilities"]
    assert sum(probs.values()) == pytest.approx(1.0)
    assert res.score == pytest.approx(probs["1"])  # a 0/1 rubric: normalised expectation is P(1)
    assert res.passed == (probs["1"] >= 0.5)


def test_self_refine_with_the_real_judge(judge_model):
    judge = (
        CriteriaJudge.builder(judge_model)
        .check("has_number", lambda s: any(c.isdigit() for c in s["assistant_answer"]), "No number given")
        .noul("is_relevant", Noul("Does `assistant_answer` answer `user_question`?"), 0.5)
        .build()
    )
    answers = iter(["It is tall.", "It is 330 metres tall."])
    seen_feedback = []

    def generate(prompt, feedback):
        seen_feedback.append(feedback)
        return next(answers)

    result = SelfRefine(generate, CriteriaEvaluator(judge), max_attempts=2).run("How tall is the Eiffel Tower?")
    first = result.attempts[0].response
    assert not first.passed and "has_number: No number given" in first.feedback
    assert seen_feedback == [None, first.feedback]
    assert len(result.attempts) == 2 and result.answer == "It is 330 metres tall."
    assert result.passed == result.attempts[1].response.passed
    assert result.attempts[1].response.metadata["findings"]["has_number"] == "PASSED"
