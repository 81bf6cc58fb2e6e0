"""The pytest hooks and fixtures (registered through the ``pytest11`` entry point ``judgelab``).

Importing this module imports pytest and the standard library only; the model
loads when a test first asks for ``judge``, ``fact_check``, ``relevancy``,
``evaluator`` or ``judge_batch``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from judgelab.testing._batch import MARKER, BatchPlan, BatchView, evaluator_key
from judgelab.testing._expect import set_abstain_mode
from judgelab.testing._options import add_options, read_settings
from judgelab.testing._session import JudgeSession, TrackedEvaluator

if TYPE_CHECKING:
    from judgelab.engine import JudgeModel

__all__ = [
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

_SESSION = pytest.StashKey[JudgeSession]()
_PLAN = pytest.StashKey[BatchPlan]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    settings = read_settings(config)
    config.stash[_SESSION] = JudgeSession(settings)
    config.stash[_PLAN] = BatchPlan()
    set_abstain_mode(settings.abstain)
    config.addinivalue_line(
        "markers",
        f"{MARKER}(evaluator='fact-checking', **options): the evaluator judge_batch scores this test's "
        "EvaluationRequest parameters with (docs/testing.md)",
    )


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_PLAN].collect(session.items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    judge_session = item.config.stash[_SESSION]
    judge_session.item = item
    try:
        yield
    finally:
        judge_session.item = None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config) -> None:
    judge_session = config.stash.get(_SESSION, None)
    lines = judge_session.summary_lines() if judge_session is not None else []
    if lines:
        terminalreporter.write_sep("-", "judgelab")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    judge_session = config.stash.get(_SESSION, None)
    if judge_session is not None:
        judge_session.close()


# -- fixtures -----------------------------------------------------------------------


@pytest.fixture(scope="session")
def judgelab_session(pytestconfig: pytest.Config) -> JudgeSession:
    """The session's ``JudgeSession`` (model, policy, counters)."""
    return pytestconfig.stash[_SESSION]


@pytest.fixture(scope="session")
def judge(judgelab_session: JudgeSession) -> JudgeModel:
    """The session's ``JudgeModel``, loaded once with ``--judgelab-model/-backend/-threads``."""
    return judgelab_session.model


@pytest.fixture(scope="session")
def fact_check(judgelab_session: JudgeSession) -> TrackedEvaluator:
    """The default fact-check evaluator (``FactCheckingEvaluator``): ``user_text`` is the document,
    ``response_content`` the claim."""
    return judgelab_session.build(None, task="fact-check")


@pytest.fixture(scope="session")
def relevancy(judgelab_session: JudgeSession) -> TrackedEvaluator:
    """The default relevancy evaluator (``RelevancyEvaluator``): ``user_text`` is the query,
    ``data_list`` the context, ``response_content`` the answer."""
    return judgelab_session.build(None, task="relevancy")


@pytest.fixture(scope="session")
def evaluator(judgelab_session: JudgeSession) -> Callable[..., TrackedEvaluator]:
    """``evaluator(name, **options)``: any registered evaluator (``judgelab.evaluators.evaluator_names()``,
    ``NAME+fenced`` or ``module:callable``) on the session's model; built once per name and options."""
    built: dict[str, TrackedEvaluator] = {}

    def make(name: str, **options: Any) -> TrackedEvaluator:
        key = repr((name, sorted(options.items())))
        if key not in built:
            built[key] = judgelab_session.build(name, **options)
        return built[key]

    return make


@pytest.fixture
def judge_batch(request: pytest.FixtureRequest, judgelab_session: JudgeSession) -> BatchView:
    """This test's responses from the session's batch: every ``EvaluationRequest`` parameter of the
    tests that use this fixture, judged in one ``evaluate_many`` when the first of them starts."""
    plan = request.config.stash[_PLAN]
    plan.score(judgelab_session)
    return BatchView(plan, judgelab_session, evaluator_key(request.node))
