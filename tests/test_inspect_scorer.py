"""``judgelab.harnesses.inspect_scorer``: a judgelab evaluator as an Inspect AI scorer, run by Inspect itself."""

from __future__ import annotations

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample

from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator
from judgelab.harnesses import inspect_scorer, recorded_answer
from judgelab.testing import ScriptedEvaluator

SAMPLES = [
    ("What is the capital of France?", "The capital of France is Paris.", "Paris is the capital of France."),
    ("What is the capital of France?", "The capital of France is Paris.", "Berlin is the capital of France."),
    ("How many legs does a spider have?", "A spider has eight legs.", "Spiders have eight legs."),
]


def test_scores_are_the_evaluators_probabilities_with_its_metadata(judge_model, tmp_path):
    evaluator = FactCheckingEvaluator(judge_model)
    task = Task(dataset=[Sample(input=q, target=t, metadata={"submission": s}) for q, t, s in SAMPLES],
                solver=recorded_answer(), scorer=inspect_scorer(evaluator))
    log = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    values = []
    for sample, (question, target, submission) in zip(log.samples, SAMPLES):
        score = sample.scores["judgelab"]
        direct = evaluator.evaluate(EvaluationRequest(question, [target], submission))
        assert score.value == pytest.approx(direct.score, abs=1e-9)
        assert score.answer == submission and score.explanation == direct.feedback
        assert score.metadata["passed"] == direct.passed
        assert set(direct.metadata) <= set(score.metadata)
        values.append(score.value)
    metrics = log.results.scores[0].metrics
    assert metrics["mean"].value == pytest.approx(sum(values) / len(values))


def test_recorded_answer_names_the_sample_without_an_answer(tmp_path):
    # A scripted judge: the solver fails before anything is scored.
    task = Task(dataset=[Sample(input="q", target="t", id="no-answer", metadata={})],
                solver=recorded_answer(), scorer=inspect_scorer(ScriptedEvaluator({})))
    log = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")[0]
    assert log.status == "error"
    assert "no-answer" in log.error.message and "metadata['submission']" in log.error.message
