"""``TemplateConfig``: a template evaluator's parameters, one frozen value known without a model.

A template evaluator (``YesNoEvaluator`` and its subclasses) takes its
parameters as one ``TemplateConfig`` (``FactCheckingEvaluator(model,
threshold=0.7)`` builds it with ``config_for``). Its identity
(``EvaluatorIdentity``: which judge, asked how) and its template hash (the
question a policy was calibrated for) read only the class, name, template,
system prompt, label words, threshold, calibrator and decomposition of that
config, so the one computation serves both a built evaluator
(``evaluator.config()``) and a name that was not built
(``judgelab.evaluators.evaluator_config``): calibration checks saved scores,
and the server and MCP bind a policy, without building an evaluator on a
stand-in model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from judgelab.evaluators._identity import EvaluatorIdentity, config_hash
from judgelab.evaluators._spi import BaseEvaluator

__all__ = ["DecisionPolicy", "ScoreCalibrator", "TemplateConfig"]


class ScoreCalibrator(Protocol):
    """What an evaluator needs of a fitted calibrator: ``predict(scores) -> calibrated scores``.

    ``judgelab.calibration.Calibrator`` (the base class of the fitted
    calibrators ``calibrate`` saves) satisfies it; so does any object with
    that method.
    """

    def predict(self, scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...


class DecisionPolicy(Protocol):
    """A calibrated pass/fail/abstain policy (``judgelab.calibration.load_policy``)."""

    alpha: float
    n: int

    def decide(self, score: float) -> str: ...

    def check(self, *, spec_hash: str | None, template_hash: str | None, where: str = ...) -> None: ...

    def summary(self) -> dict[str, object]: ...


@dataclass(frozen=True)
class TemplateConfig:
    """A template evaluator's parameters; its identity and template hash read all but the last two.

    Attributes
    ----------
    kind
        The evaluator class (``FactCheckingEvaluator``, ``RelevancyEvaluator``...).
    name
        Its name (``fact-checking``, ``bespoke-minicheck``, ``relevancy+fenced``...).
    template
        The prompt template with its placeholders.
    system
        The system prompt; ``None`` for the model spec's.
    labels
        The (yes, no) label words.
    threshold
        The pass threshold.
    calibrator
        The fitted calibrator, or ``None``.
    decomposition
        ``(window, top_windows)`` when the claim is checked sentence by
        sentence (``fact-checking-sentences``), else ``None``.
    policy
        A calibrated pass/fail/abstain policy that decides instead of the
        threshold, or ``None``; checked against the model when the evaluator
        is built. Not part of the identity (scores do not depend on it).
    abstain_passes
        With a policy: whether an ABSTAIN decision passes.
    """

    kind: type[BaseEvaluator]  # a YesNoEvaluator subclass (_yesno imports this module)
    name: str
    template: str
    system: str | None = None
    labels: tuple[str, ...] = ("Yes", "No")
    threshold: float = 0.5
    calibrator: ScoreCalibrator | None = None
    decomposition: tuple[int, int] | None = None
    policy: DecisionPolicy | None = None
    abstain_passes: bool = False

    @property
    def template_hash(self) -> str:
        """A short hash of what the model is asked: evaluator class, template, system prompt, labels."""
        payload = json.dumps([self.kind.__name__, self.template, self.system, list(self.labels)])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def identity(self, spec_hash: str | None) -> EvaluatorIdentity:
        """The identity of this evaluator on a model whose spec has ``spec_hash``."""
        to_dict = getattr(self.calibrator, "to_dict", None)
        cal = to_dict() if callable(to_dict) else (None if self.calibrator is None else repr(self.calibrator))
        config = {"name": self.name, "template": self.template, "system": self.system, "labels": list(self.labels),
                  "threshold": float(self.threshold), "calibrator": cal}
        evaluator_hash = config_hash(f"{self.kind.__module__}.{self.kind.__qualname__}", config)
        if self.decomposition is not None:
            window, top_windows = self.decomposition
            evaluator_hash = config_hash("fact-checking-sentences",
                                         {"base": evaluator_hash, "window": window, "top_windows": top_windows})
        return EvaluatorIdentity(spec_hash, evaluator_hash)

    def fenced(self) -> "TemplateConfig":
        """This configuration with its template fenced (``judgelab.evaluators.fenced``)."""
        from judgelab.evaluators._fence import fence_template

        return dataclasses.replace(self, template=fence_template(self.template), name=f"{self.name}+fenced")
