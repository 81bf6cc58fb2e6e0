"""``TemplateConfig``: what a template evaluator asks and how it decides, known without a model.

An evaluator's identity (``EvaluatorIdentity``: which judge, asked how) and
its template hash (the question a policy was calibrated for) read only its
class, name, template, system prompt, label words, threshold and calibrator.
A ``TemplateConfig`` holds exactly those, so the one computation serves both
a built evaluator (``YesNoEvaluator.config()``) and a name that was not built
(``judgelab.evaluators.evaluator_config``): calibration checks saved scores,
and the server and MCP bind a policy, without building an evaluator on a
stand-in model.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from judgelab.evaluators._identity import EvaluatorIdentity, config_hash

__all__ = ["TemplateConfig"]


@dataclass(frozen=True)
class TemplateConfig:
    """Everything of a template evaluator that its identity and template hash read.

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
    """

    kind: type
    name: str
    template: str
    system: str | None = None
    labels: tuple[str, ...] = ("Yes", "No")
    threshold: float = 0.5
    calibrator: Any = None
    decomposition: tuple[int, int] | None = None

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
