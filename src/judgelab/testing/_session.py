"""``JudgeSession``: the session's one judge, loaded on first use, and what its checks decided.

The plugin makes one per pytest session and loads nothing until a fixture
asks for the model. Every evaluator a fixture hands out is a
``TrackedEvaluator``: it counts checks (passed, failed, abstained), times
them, and records each one's score, threshold and decision on the running
test (``record_property``, so ``--junitxml`` carries them).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgelab.testing._expect import decision_of
from judgelab.testing._options import Settings

if TYPE_CHECKING:  # the plugin imports no model, nor the engine, until a test asks for the judge
    import pytest

    from judgelab.calibration import Policy
    from judgelab.engine import JudgeModel, LazyModel
    from judgelab.evaluators import EvaluationRequest, EvaluationResponse, Evaluator

__all__ = ["CheckStats", "JudgeSession", "TrackedEvaluator"]

log = logging.getLogger(__name__)


@dataclass
class CheckStats:
    """Counters for the terminal summary."""

    checks: int = 0
    passed: int = 0
    failed: int = 0
    abstained: int = 0
    judgment_s: float = 0.0
    load_s: float = 0.0
    batched: int = 0
    batch_calls: int = 0

    def count(self, responses: Sequence[EvaluationResponse], seconds: float) -> None:
        self.checks += len(responses)
        self.judgment_s += seconds
        for response in responses:
            decision = decision_of(response)
            if decision == "pass":
                self.passed += 1
            elif decision == "abstain":
                self.abstained += 1
            else:
                self.failed += 1


class TrackedEvaluator:
    """An evaluator whose checks the session counts and records; other attributes are the evaluator's.

    Parameters
    ----------
    evaluator
        The evaluator (anything with ``evaluate``; ``evaluate_many`` when it batches).
    session
        The session that counts its checks.
    name
        The name it was built from (for messages).
    """

    def __init__(self, evaluator: Evaluator, session: "JudgeSession", name: str) -> None:
        self.evaluator = evaluator
        self.session = session
        self.name = name

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        """Judge one request (Spring AI's ``evaluate``)."""
        return self.evaluate_many([request])[0]

    def evaluate_many(self, requests: Iterable[EvaluationRequest], *, record: bool = True) -> list[EvaluationResponse]:
        """Judge many requests in one batched call; ``record=False`` counts without recording on the test."""
        from judgelab.evaluators import evaluate_many

        requests = list(requests)
        t0 = time.perf_counter()
        responses = evaluate_many(self.evaluator, requests)
        self.session.stats.count(responses, time.perf_counter() - t0)
        if record:
            for response in responses:
                self.session.record(response, self.name)
        return responses

    def __getattr__(self, name: str) -> Any:
        return getattr(self.evaluator, name)

    def __repr__(self) -> str:
        return f"TrackedEvaluator({self.name!r}, {self.evaluator!r})"


class JudgeSession:
    """The session's judge model, policy and counters.

    Parameters
    ----------
    settings
        The plugin's options.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.stats = CheckStats()
        self.item: pytest.Item | None = None  # the test running now (its user_properties take the records)
        self._lazy: LazyModel | None = None  # made on first use
        self._policy: Policy | None = None
        self.policy_names: list[str] = []

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded."""
        return self._lazy is not None and self._lazy.loaded

    @property
    def model(self) -> JudgeModel:
        """The ``JudgeModel``, loaded on first use with the session's options (through the one lazy loader)."""
        if self._lazy is None:
            from judgelab.engine import LazyModel
            from judgelab.specs import DEFAULT_MODEL_ID

            options: dict[str, object] = {"backend": self.settings.backend}
            if self.settings.threads:
                options["n_threads"] = self.settings.threads
            self._lazy = LazyModel(self.settings.model or DEFAULT_MODEL_ID, options)
        if not self._lazy.loaded:
            t0 = time.perf_counter()
            model = self._lazy.load()
            self.stats.load_s = time.perf_counter() - t0
            log.info("judgelab: loaded %s in %.2f s", model.id, self.stats.load_s)
        return self._lazy.load()

    @property
    def policy(self) -> Policy | None:
        """The ``--judgelab-policy`` policy, read on first use, or ``None``."""
        if self._policy is None and self.settings.policy is not None:
            from judgelab.calibration import load_policy

            self._policy = load_policy(self.settings.policy)
        return self._policy

    def build(self, name: str | None, *, task: str | None = None, **options: Any) -> TrackedEvaluator:
        """The evaluator ``name`` (or ``task``'s default) on the session's model, tracked.

        ``--judgelab-threshold`` is its threshold unless ``options`` set one.
        The policy decides for it when it was calibrated for the question this
        evaluator asks (same template hash; the spec hash is checked too, and a
        mismatch raises ``PolicyMismatchError``).
        """
        from judgelab.evaluators import build_evaluator, default_evaluator_name
        from judgelab.wire import policy_applies

        name = name or default_evaluator_name(task or "fact-check")
        if self.settings.threshold is not None and "threshold" not in options:
            options["threshold"] = self.settings.threshold
        evaluator = build_evaluator(name, self.model, **options)
        policy = self.policy
        if policy is not None and "policy" not in options and hasattr(evaluator, "set_policy"):
            if policy_applies(policy, evaluator):
                evaluator.set_policy(policy)
                if name not in self.policy_names:
                    self.policy_names.append(name)
        return TrackedEvaluator(evaluator, self, name)

    def record(self, response: EvaluationResponse, name: str) -> None:
        """Record one check's score, threshold and decision on the running test."""
        if self.item is None:
            return
        meta = getattr(response, "metadata", None) or {}
        props = [("judgelab_evaluator", name), ("judgelab_score", round(float(response.score), 6)),
                 ("judgelab_threshold", meta.get("threshold")), ("judgelab_decision", decision_of(response))]
        policy = meta.get("policy")
        if isinstance(policy, dict):
            props.append(("judgelab_band", f"[{policy.get('lower')}, {policy.get('upper')}]"))
        props.append(("judgelab_model", meta.get("model")))
        self.item.user_properties.extend(props)

    def summary_lines(self) -> list[str]:
        """The terminal summary; empty when no check ran and no model was loaded."""
        s = self.stats
        if not s.checks and not self.loaded:
            return []
        lines = [f"{s.checks} checks: {s.passed} passed, {s.failed} failed, {s.abstained} abstained; "
                 f"judgment {s.judgment_s:.2f} s"
                 + (f" ({s.batched} of them in {s.batch_calls} judge_batch call(s))" if s.batch_calls else "")]
        if self.loaded and self._lazy is not None:
            m = self._lazy.load()
            lines.append(f"judge {m.id} (spec {m.spec.spec_hash}, {self.settings.backend}), "
                         f"loaded in {s.load_s:.2f} s")
        if self._policy is not None:
            applied = ", ".join(self.policy_names) or "no evaluator used (threshold decided)"
            lines.append(f"policy {self.settings.policy} (task {self._policy.task}, band "
                         f"[{self._policy.lower}, {self._policy.upper}], alpha {self._policy.alpha:g}): {applied}")
        return lines

    def close(self) -> None:
        if self._lazy is not None:
            self._lazy.close()
            self._lazy = None
