"""SelfRefine's loop on a scripted evaluator (the real-judge path is in test_criteria_real.py)."""

from __future__ import annotations

import pytest

from judgelab.evaluators import EvaluationResponse, SelfRefine


class PassesOn:
    """Passes answers that contain ``word``; feedback names the attempt."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.seen: list[str] = []

    def evaluate(self, request):
        self.seen.append(request.response_content)
        ok = self.word in request.response_content
        return EvaluationResponse(ok, 1.0 if ok else 0.0, "" if ok else f"say {self.word} (try {len(self.seen)})")


def scripted_generator(answers):
    calls = []

    def generate(prompt, feedback):
        calls.append((prompt, feedback))
        return answers[len(calls) - 1]

    return generate, calls


def test_stops_at_the_first_pass_and_feeds_back_the_feedback():
    generate, calls = scripted_generator(["nope", "still nope", "now with magic", "never asked"])
    result = SelfRefine(generate, PassesOn("magic"), max_attempts=5).run("Write it.")
    assert result.passed and result.answer == "now with magic"
    assert [a.answer for a in result.attempts] == ["nope", "still nope", "now with magic"]
    assert calls == [("Write it.", None), ("Write it.", "say magic (try 1)"), ("Write it.", "say magic (try 2)")]
    assert [r.passed for r in result.responses] == [False, False, True]
    assert result.error is None


def test_gives_up_after_max_attempts_with_the_last_answer():
    generate, calls = scripted_generator(["a", "b", "c", "d"])
    result = SelfRefine(generate, PassesOn("zzz"), max_attempts=3)("p")
    assert not result.passed and result.answer == "c" and len(calls) == 3
    assert len(result.responses) == 3


def test_a_failing_generator_ends_the_loop_and_keeps_what_was_done():
    def generate(prompt, feedback):
        if feedback:
            raise RuntimeError("generator down")
        return "first"

    result = SelfRefine(generate, PassesOn("zzz"), max_attempts=3).run("p")
    assert not result.passed
    assert result.answer == "first"
    assert isinstance(result.error, RuntimeError) and "generator down" in str(result.error)
    assert [a.answer for a in result.attempts] == ["first", None]
    assert result.attempts[1].error is result.error and result.attempts[1].feedback_in == "say zzz (try 1)"
    assert len(result.responses) == 1


def test_a_failing_evaluator_is_recorded_too():
    class Broken:
        def evaluate(self, request):
            raise ValueError("judge down")

    result = SelfRefine(lambda p, f: "x", Broken()).run("p")
    assert result.answer == "x" and not result.passed and isinstance(result.error, ValueError)
    assert result.attempts[0].response is None


def test_a_non_string_answer_is_an_error_not_a_crash():
    result = SelfRefine(lambda p, f: None, PassesOn("x")).run("p")
    assert isinstance(result.error, TypeError) and result.answer is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_max_attempts_must_be_a_positive_int(bad):
    with pytest.raises(ValueError, match="max_attempts"):
        SelfRefine(lambda p, f: "x", PassesOn("x"), max_attempts=bad)
