"""The judge behind ``calibrate``: its spec known up front, its model loaded only to score, its evaluators
built by name from the one evaluator registry (``judgelab.evaluators``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from judgelab.calibration.scoring import DEFAULT_EVALUATORS
from judgelab.calibration.scoring import LazyModel, spec_is_final
from judgelab.evaluators import (
    Evaluator,
    EvaluatorIdentity,
    build_evaluator,
    evaluator_identity,
)

__all__ = ["Judge", "task_identity"]


class Judge:
    """The judge model behind ``calibrate``: its spec is known up front, the model is loaded only to score.

    ``model`` is a loaded ``JudgeModel`` (used as is), a ``LazyModel`` or
    another loader (a callable returning one, optionally with a ``spec``
    attribute), or, as a convenience for library callers, a model id or path.
    """

    def __init__(self, model: Any, options: Mapping[str, Any]) -> None:
        self._named = isinstance(model, (str, Path))
        self.original = model  # what the caller passed (a distributed executor ships an id or path)
        self.given = LazyModel(model, options) if self._named else model
        self.options = options
        is_loaded = hasattr(model, "judge_many") and not isinstance(model, LazyModel)
        self.loaded: Any = model if is_loaded else None
        self._owned = False
        self.used = False

    @cached_property
    def spec(self) -> Any:
        """The model spec, without loading the model (``None`` for a bare weights file)."""
        if self.loaded is not None:
            return self.loaded.spec
        if isinstance(self.given, LazyModel):
            return self.given.spec_before_loading
        return getattr(self.given, "spec", None)

    @property
    def name(self) -> str:
        if self._named:
            return str(self.given)
        return getattr(self.spec, "id", None) or str(self.given)

    @property
    def spec_hash_before_loading(self) -> str | None:
        """The spec hash scores will carry, when it is certain before loading."""
        if self.loaded is not None:
            return self.loaded.spec.spec_hash
        return self.spec.spec_hash if spec_is_final(self.spec) else None

    def load(self) -> Any:
        self.used = True
        if self.loaded is None:
            self.loaded = self.given()
            self._owned = True
        return self.loaded

    def close(self) -> None:
        if self._owned and hasattr(self.loaded, "close"):
            self.loaded.close()


def task_identity(task: str, judge: Judge, evaluators: Mapping[str, Evaluator]) -> EvaluatorIdentity | None:
    """Who would score ``task`` now, known without loading the model (``None`` when unknown)."""
    if task in evaluators:
        return evaluator_identity(evaluators[task])
    if task not in DEFAULT_EVALUATORS:
        return None
    # the default evaluator's identity reads only its model's spec hash: build it on that alone
    not_loaded = SimpleNamespace(spec=SimpleNamespace(spec_hash=judge.spec_hash_before_loading))
    return evaluator_identity(build_evaluator(None, not_loaded, task=task))
