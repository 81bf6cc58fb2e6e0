"""judgelab's pytest plugin: LLM judge checks as tests (docs/testing.md).

Registered through the ``pytest11`` entry point ``judgelab``, so installing
judgelab makes it available to every pytest run; it loads nothing until a
test asks for one of its fixtures:

- ``judge``: the session's ``JudgeModel`` (``--judgelab-model``, loaded once);
- ``fact_check``, ``relevancy``: the default evaluators of those tasks;
- ``evaluator(name, **options)``: any registered evaluator;
- ``judge_batch``: every ``EvaluationRequest`` parameter of the tests that use
  it, judged in one ``evaluate_many`` before they run.

``assert_passes(response)`` and ``assert_fails(response)`` explain a failure
(score, threshold or policy decision, feedback, chunk scores, model, spec
hash); with ``--judgelab-policy`` an abstention skips the test with its band
(``--judgelab-abstain=fail`` fails it). Every check's score, threshold and
decision go to the test's ``record_property`` list (``--junitxml``), and the
terminal summary counts them.

``ScriptedEvaluator`` and ``ScriptedModel`` (fixed answers) test a pipeline's
own logic without weights.
"""

from judgelab.testing._batch import BatchView
from judgelab.testing._doubles import FakeSpec, ScriptedEvaluator, ScriptedModel
from judgelab.testing._expect import assert_fails, assert_passes, describe
from judgelab.testing._options import Settings
from judgelab.testing._plugin import (
    evaluator,
    fact_check,
    judge,
    judge_batch,
    judgelab_session,
    pytest_addoption,
    pytest_collection_finish,
    pytest_configure,
    pytest_runtest_protocol,
    pytest_terminal_summary,
    pytest_unconfigure,
    relevancy,
)
from judgelab.testing._session import JudgeSession, TrackedEvaluator

__all__ = [
    "BatchView",
    "FakeSpec",
    "ScriptedEvaluator",
    "ScriptedModel",
    "JudgeSession",
    "Settings",
    "TrackedEvaluator",
    "assert_fails",
    "assert_passes",
    "describe",
    "evaluator",
    "fact_check",
    "judge",
    "judge_batch",
    "judgelab_session",
    "pytest_addoption",
    "pytest_collection_finish",
    "pytest_configure",
    "pytest_runtest_protocol",
    "pytest_terminal_summary",
    "pytest_unconfigure",
    "relevancy",
]
