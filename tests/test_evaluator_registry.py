"""The one evaluator registry: names, task defaults, modifiers and errors."""

import pytest

from judgelab.errors import JudgelabError
from judgelab.evaluators import (
    FactCheckingEvaluator,
    RelevancyEvaluator,
    build_evaluator,
    default_evaluator_name,
    evaluator_names,
    register_evaluator,
    registered_evaluator,
)


class _Model:
    """A stand-in model: the registry only passes it on."""

    spec = None


def test_shipped_names_and_task_defaults():
    assert {"fact-checking", "bespoke-minicheck", "relevancy"} <= set(evaluator_names())
    assert default_evaluator_name("fact-check") == "fact-checking"
    assert default_evaluator_name("relevancy") == "relevancy"
    assert registered_evaluator("relevancy").task == "relevancy"


def test_build_by_name_by_task_and_with_options():
    model = _Model()
    ev = build_evaluator("fact-checking", model, threshold=0.7)
    assert isinstance(ev, FactCheckingEvaluator) and ev.threshold == 0.7
    assert isinstance(build_evaluator(None, model, task="relevancy"), RelevancyEvaluator)


def test_unknown_names_and_modifiers_are_one_line_errors():
    with pytest.raises(JudgelabError, match="Unknown evaluator 'nope'.*fact-checking"):
        build_evaluator("nope", _Model())
    with pytest.raises(JudgelabError, match="modifier 'shiny'"):
        build_evaluator("relevancy+shiny", _Model())
    with pytest.raises(JudgelabError, match="No default evaluator for task 'summarise'"):
        build_evaluator(None, _Model(), task="summarise")


def test_register_refuses_a_taken_name_unless_replaced():
    with pytest.raises(JudgelabError, match="already registered"):
        register_evaluator("relevancy", lambda m, **o: None)
    entry = register_evaluator("test-only-registry", lambda m, **o: ("built", o), replace=True)
    assert build_evaluator("test-only-registry", _Model(), x=1) == ("built", {"x": 1})
    assert entry.name == "test-only-registry"
