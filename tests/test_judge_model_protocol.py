"""``JudgeModel`` is one protocol that every judge model satisfies: in process, remote, queued, lazy."""

from __future__ import annotations

import inspect

import pytest

from judgelab.engine import BackendJudgeModel, JudgeModel, LazyModel, RemoteJudgeModel
from judgelab.server import QueuedModel

MEMBERS = sorted(name for name in vars(JudgeModel) if not name.startswith("_"))


def test_the_protocol_names_the_core_calls():
    assert {"id", "spec", "n_ctx", "render", "probabilities", "judge_many", "resolve_labels", "close"} <= set(MEMBERS)


@pytest.mark.parametrize("cls", [BackendJudgeModel, RemoteJudgeModel, QueuedModel])
def test_every_model_class_has_every_member_with_the_protocols_parameters(cls):
    for name in MEMBERS:
        theirs, ours = getattr(JudgeModel, name), inspect.getattr_static(cls, name, None)
        if callable(theirs) and not isinstance(theirs, property):
            assert ours is not None, f"{cls.__name__} lacks {name}"
            assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), name
        elif name != "spec" or cls is QueuedModel:  # the in-process models set spec (and stats) in __init__
            assert ours is not None or name == "stats", f"{cls.__name__} lacks {name}"


def test_a_lazy_model_answers_every_member_from_the_model_it_loads(judge_model):
    lazy = LazyModel(judge_model)
    for name in MEMBERS:
        assert getattr(lazy, name) is not None
    prompt = lazy.render("Is ice cold?")
    assert lazy.probabilities(prompt, ("Yes", "No")) == judge_model.probabilities(prompt, ("Yes", "No"))
