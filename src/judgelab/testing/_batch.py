"""``judge_batch``: the checks of a parametrised suite, scored in one ``evaluate_many`` before they run.

At the end of collection the plugin looks at every test that uses the
``judge_batch`` fixture and takes the ``EvaluationRequest`` values of its
parameters (``pytest.mark.parametrize``), with the evaluator named by its
``pytest.mark.judgelab(evaluator=..., **options)`` marker (default:
fact-checking). When the first of those tests sets the fixture up, all of
them are judged at once, one ``evaluate_many`` per evaluator, so checks that
share a document or a template share their prefill. Each test then reads
its own response (a request that was not registered is judged on its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from judgelab.testing._expect import assert_fails, assert_passes

if TYPE_CHECKING:
    import pytest

    from judgelab.evaluators import EvaluationRequest, EvaluationResponse
    from judgelab.testing._session import JudgeSession, TrackedEvaluator

__all__ = ["BatchPlan", "BatchView", "MARKER", "request_key"]

MARKER = "judgelab"
"""``@pytest.mark.judgelab(evaluator="relevancy", threshold=0.7)``: the evaluator a test's checks use."""

DEFAULT_EVALUATOR = "fact-checking"

EvaluatorKey = tuple[str, tuple[tuple[str, Any], ...]]
RequestKey = tuple[str, tuple[str, ...], str]


class _Marked(Protocol):
    """A test item or node (``request.node``): what ``evaluator_key`` reads."""

    def get_closest_marker(self, name: str) -> pytest.Mark | None: ...


def _is_request(value: object) -> bool:
    return hasattr(value, "user_text") and hasattr(value, "response_content") and hasattr(value, "data_list")


def request_key(request: EvaluationRequest) -> RequestKey:
    """What identifies a request's check: its texts (document metadata is not judged)."""
    docs = tuple(d if isinstance(d, str) else d.text for d in request.data_list)
    return (request.user_text, docs, request.response_content)


def evaluator_key(item: _Marked) -> EvaluatorKey:
    """The evaluator name and options of a test item's ``judgelab`` marker."""
    marker = item.get_closest_marker(MARKER)
    kwargs: Mapping[str, object] = dict(marker.kwargs) if marker is not None else {}
    name = kwargs.get("evaluator") or (marker.args[0] if marker is not None and marker.args else DEFAULT_EVALUATOR)
    options = tuple(sorted((k, v) for k, v in kwargs.items() if k != "evaluator"))
    return str(name), options


class BatchPlan:
    """The checks registered at collection time, and their responses once scored."""

    def __init__(self) -> None:
        self.pending: dict[EvaluatorKey, dict[RequestKey, EvaluationRequest]] = {}
        self.responses: dict[tuple[EvaluatorKey, RequestKey], EvaluationResponse] = {}
        self.tracked: dict[EvaluatorKey, TrackedEvaluator] = {}

    def collect(self, items: list[pytest.Item]) -> int:
        """Register the request parameters of the items that use ``judge_batch``; how many."""
        n = 0
        for item in items:
            callspec = getattr(item, "callspec", None)
            if "judge_batch" not in getattr(item, "fixturenames", ()) or callspec is None:
                continue
            requests = [v for v in callspec.params.values() if _is_request(v)]
            if requests:
                bucket = self.pending.setdefault(evaluator_key(item), {})
                for request in requests:
                    bucket.setdefault(request_key(request), request)
                    n += 1
        return n

    def evaluator(self, session: JudgeSession, key: EvaluatorKey) -> TrackedEvaluator:
        if key not in self.tracked:
            name, options = key
            self.tracked[key] = session.build(name, **dict(options))
        return self.tracked[key]

    def score(self, session: JudgeSession) -> None:
        """Judge every pending request: one ``evaluate_many`` per evaluator."""
        for key, bucket in list(self.pending.items()):
            requests = [r for k, r in bucket.items() if (key, k) not in self.responses]
            if not requests:
                continue
            responses = self.evaluator(session, key).evaluate_many(requests, record=False)
            for request, response in zip(requests, responses):
                self.responses[(key, request_key(request))] = response
            session.stats.batched += len(requests)
            session.stats.batch_calls += 1
        self.pending.clear()

    def response(self, session: JudgeSession, key: EvaluatorKey, request: EvaluationRequest) -> EvaluationResponse:
        found = self.responses.get((key, request_key(request)))
        tracked = self.evaluator(session, key)
        if found is None:  # not registered at collection: judged alone
            return tracked.evaluate(request)
        session.record(found, key[0])
        return found


class BatchView:
    """What a test gets as ``judge_batch``: its response for a request, and assertions on it.

    ``judge_batch(request)`` is the ``EvaluationResponse`` (scored before the
    tests ran when the request was a parameter of this test);
    ``judge_batch.assert_passes(request)`` and ``assert_fails`` assert on it.
    """

    def __init__(self, plan: BatchPlan, session: JudgeSession, key: EvaluatorKey) -> None:
        self.plan = plan
        self.session = session
        self.key = key

    def __call__(self, request: EvaluationRequest) -> EvaluationResponse:
        return self.plan.response(self.session, self.key, request)

    def assert_passes(self, request: EvaluationRequest, msg: str | None = None) -> EvaluationResponse:
        __tracebackhide__ = True
        response = self(request)
        assert_passes(response, msg)
        return response

    def assert_fails(self, request: EvaluationRequest, msg: str | None = None) -> EvaluationResponse:
        __tracebackhide__ = True
        response = self(request)
        assert_fails(response, msg)
        return response
