"""Inspect AI's model-graded scorers with ``judgelab serve`` as the grader model.

The real ``inspect-ai`` package runs a tiny task (the answers to grade are
fixed by a solver, so no model writes them) and grades each sample through
its OpenAI-compatible provider (``openai-api/judgelab/...``) against a real
server on 127.0.0.1. ``model_graded_fact`` asks for ``GRADE: C`` or
``GRADE: I``; the server, started with those labels, answers with one of them
(before sequence labels it answered "Yes" and every score was a failure).
"""

from __future__ import annotations

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import model_graded_fact, model_graded_qa

from judgelab.harnesses import recorded_answer

GRADES = ("GRADE: C", "GRADE: I")
SAMPLES = [
    ("What is the capital of France?", "Paris", "Paris"),
    ("What is the capital of France?", "Paris", "Berlin is the capital of France."),
    ("How many legs does a spider have?", "Eight", "A spider has eight legs."),
]


def _task(scorer) -> Task:
    dataset = [Sample(input=q, target=t, metadata={"submission": s}) for q, t, s in SAMPLES]
    return Task(dataset=dataset, solver=recorded_answer(), scorer=scorer)


def _grader(url: str, **config):
    return get_model("openai-api/judgelab/gemma-3-270m", base_url=f"{url}/v1", api_key="unused",
                     config=GenerateConfig(**config))


def _run(task: Task, log_dir) -> list:
    log = inspect_eval(task, model="mockllm/model", log_dir=str(log_dir), display="none")[0]
    assert log.status == "success", log.error
    return [next(iter(s.scores.values())) for s in log.samples]


def _text(message) -> str:
    content = message["content"] if isinstance(message, dict) else message.content
    if isinstance(content, str):
        return content
    return "".join(part["text"] if isinstance(part, dict) else part.text for part in content)


def test_model_graded_fact_gets_real_grades(grade_server, judge_model, label_likelihoods, tmp_path):
    scores = _run(_task(model_graded_fact(model=_grader(grade_server.url))), tmp_path)
    assert len(scores) == len(SAMPLES)
    for score in scores:
        assert score.value in ("C", "I"), score.explanation  # a grade, not a scoring failure
        assert score.explanation in GRADES  # the grader's whole answer: exactly one label
        prompt = _text(score.metadata["grading"][0])  # the grading prompt Inspect sent
        direct = label_likelihoods(judge_model, judge_model.render(prompt), GRADES)
        assert score.explanation == max(direct, key=direct.get)


def test_labels_sent_with_the_request_override_the_servers(grade_server, tmp_path):
    """``labels`` in the request body (Inspect's ``extra_body``) picks the labels per grader."""
    grader = _grader(grade_server.url, extra_body={"labels": ["GRADE: P", "GRADE: I"]})
    scores = _run(_task(model_graded_qa(model=grader, partial_credit=True)), tmp_path)
    assert all(score.value in ("P", "I") for score in scores), [s.explanation for s in scores]
