"""The wire layer (``judgelab.wire``): conversations to one judge turn, Decisions and System One
questions to typed questions and back, and binding a policy by template hash.

The server, MCP and the pytest plugin all go through it (their own tests run it on the real model);
these tests pin the translation itself on a scripted model (logic above the engine).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import TypeAdapter, ValidationError

from judgelab.errors import ContextLengthError, JudgelabError, PolicyMismatchError, QuestionError
from judgelab.wire import (
    DecisionQuestion,
    WireError,
    apply_policy,
    ask_decisions,
    ask_systemone,
    bind_policy,
    check_decision_questions,
    content_text,
    one_turn,
    policy_applies,
    template_hash_of,
)

QUESTION = TypeAdapter(DecisionQuestion)


def _q(type_, name=None, instructions="Is it polite?", **extra):
    return QUESTION.validate_python({"type": type_, "name": name, "instructions": instructions, **extra})


def _choices(*values):
    return [{"value": v} for v in values]


def _levels(n):
    return [{"label": f"L{i}", "description": "d" if i == 0 else None} for i in range(n)]


def test_one_turn_keeps_a_lone_user_message_and_writes_out_conversations():
    assert one_turn([("user", "Hi.")], param="messages") == ("Hi.", None)
    text, system = one_turn([("system", "Be strict."), ("developer", "Terse."), ("user", "Q?"),
                             ("assistant", "A.")], param="messages")
    assert system == "Be strict.\n\nTerse." and text == "User: Q?\n\nAssistant: A."
    with pytest.raises(WireError, match="only system messages") as caught:
        one_turn([("system", "x")], param="input")
    assert caught.value.param == "input" and isinstance(caught.value, QuestionError)
    with pytest.raises(WireError, match="is empty"):
        one_turn([], param="messages")


def test_content_text_reads_text_parts_and_refuses_images_naming_the_part():
    assert content_text([{"type": "text", "text": "a"}, "b", {"type": "input_json", "data": {"k": 1}}],
                        param="m") == "a\nb\n{\n  \"k\": 1\n}"
    assert content_text(None, param="m") == ""
    with pytest.raises(WireError) as caught:
        content_text(["ok", {"type": "image_url", "image_url": "x"}], param="messages.0.content")
    assert caught.value.param == "messages.0.content.1" and caught.value.code == "unsupported_content"
    assert "reads text only" in str(caught.value)


@pytest.mark.parametrize("questions, param, code", [
    ([], "questions", "invalid_request"),
    ([_q("predicate")] * 401, "questions", "too_many_questions"),
    ([_q("predicate", "a"), _q("predicate", "a")], "questions.1.name", "duplicate_question_name"),
    ([_q("choice", choices=_choices(True, "TRUE"))], "questions.0.choices.1.value", "duplicate_choice"),
    ([_q("choice", choices=_choices(*[f"c{i}" for i in range(27)]))], "questions.0.choices", "too_many_choices"),
    ([_q("score", levels=_levels(11))], "questions.0.levels", "invalid_levels"),
    ([_q("score", levels=_levels(1))], "questions.0.levels", "invalid_levels"),
])
def test_decision_questions_the_api_refuses(questions, param, code):
    with pytest.raises(WireError) as caught:
        check_decision_questions(questions)
    assert (caught.value.param, caught.value.code) == (param, code)


@pytest.mark.parametrize("question", [
    {"type": "choice", "instructions": "Pick.", "choices": [{"value": "a"}]},  # one option
    {"type": "choice", "instructions": "Pick.", "choices": [{"value": 1}, {"value": 0}]},  # not a string or boolean
    {"type": "score", "instructions": "Rate."},  # no levels
    {"type": "predicate", "instructions": 5},
    {"type": "predicate", "instructions": "Is it polite?", "weight": 2},  # a field the API does not have
    {"type": "box", "instructions": "The dog."},
])
def test_the_question_model_refuses_what_the_api_does_not_have(question):
    with pytest.raises(ValidationError):
        QUESTION.validate_python(question)


@pytest.mark.parametrize("instructions", ["", "  ", [{"type": "input_text", "text": ""}]])
def test_a_question_that_asks_nothing_is_refused(scripted_model, instructions):
    with pytest.raises(WireError) as caught:
        ask_decisions(scripted_model({"polite": 0.5}), "Thanks!", [_q("predicate", instructions=instructions)])
    assert (caught.value.param, caught.value.code) == ("questions.0.instructions", "invalid_request")


def test_decisions_are_asked_together_and_answered_in_the_api_shape(scripted_model):
    model = scripted_model({"polite": 0.8, "Pick": {"x": 0.1, "false": 0.9}, "Rate": {"0": 0.25, "1": 0.75}})
    questions = [_q("predicate", "p"), _q("choice", "c", "Pick one.", choices=_choices("x", False)),
                 _q("score", "s", "Rate it.", levels=_levels(2))]
    answers, tokens = ask_decisions(model, [("system", "Judge."), ("user", "Thanks!")], questions)
    assert answers[0] == {"type": "predicate", "name": "p", "probability": pytest.approx(0.8)}
    assert answers[1]["choice"] is False and answers[1]["probabilities"][0]["value"] == "x"
    assert answers[2]["score"] == pytest.approx(0.75) and answers[2]["probabilities"][0]["label"] == "L0"
    assert tokens > 0 and len(model.calls) == 3
    with pytest.raises(ContextLengthError):
        ask_decisions(scripted_model({"polite": 0.5}, too_long="long"), "a long input", questions[:1])


def test_systemone_questions_by_name(scripted_model):
    model = scripted_model({"kind": 0.3})
    wire = {"k": SimpleNamespace(type="noul", instructions="Is it kind?", criteria=None)}
    answers, _ = ask_systemone(model, "hello", wire)
    assert answers == {"k": {"type": "noul", "noul": pytest.approx(0.3)}}
    bad = {"c": SimpleNamespace(type="choice", instructions="Pick.", criteria=["not", "a", "mapping"])}
    with pytest.raises(WireError) as caught:
        ask_systemone(model, "hello", bad)
    assert caught.value.param == "questions.c.criteria"


class _Policy:
    task = "fact-check"

    def __init__(self, spec_hash, template_hash):
        self.spec_hash, self.template_hash = spec_hash, template_hash

    def check(self, *, spec_hash, template_hash, where=""):
        if spec_hash != self.spec_hash:
            raise PolicyMismatchError(f"calibrated for another judge ({where})", expected={}, actual={})

    def summary(self):
        return {"task": self.task}


def test_a_policy_binds_to_the_evaluators_that_ask_its_question(fake_spec):
    model = SimpleNamespace(id="m", spec=fake_spec(spec_hash="s1"))
    builders = {"a": lambda: SimpleNamespace(template_hash="t1"), "b": lambda: SimpleNamespace(template_hash="t2"),
                "ensemble": lambda: (_ for _ in ()).throw(TypeError("no template"))}
    hashes = {name: template_hash_of(build) for name, build in builders.items()}
    assert hashes == {"a": "t1", "b": "t2", "ensemble": None}
    assert bind_policy(_Policy("s1", "t2"), model, hashes) == ["b"]
    with pytest.raises(PolicyMismatchError, match="calibrated for no evaluator this server runs") as caught:
        bind_policy(_Policy("s1", "t9"), model, hashes)
    assert "a t1" in str(caught.value) and "ensemble" not in str(caught.value)
    with pytest.raises(PolicyMismatchError, match="names no template hash"):
        bind_policy(_Policy("s1", None), model, hashes)
    with pytest.raises(PolicyMismatchError, match="another judge"):
        bind_policy(_Policy("s0", "t1"), model, hashes)
    assert policy_applies(_Policy("s1", "t1"), builders["a"]()) and not policy_applies(_Policy("s1", None), object())


def test_a_policy_goes_only_to_an_evaluator_that_takes_one():
    policy = _Policy("s1", "t1")
    taker = SimpleNamespace(template_hash="t1", set_policy=lambda p: setattr(taker, "policy", p))
    apply_policy(taker, policy)
    assert taker.policy is policy
    with pytest.raises(JudgelabError, match="has no set_policy"):
        apply_policy(SimpleNamespace(template_hash="t1"), policy)
