"""What scored a response: the judge model's spec hash and the evaluator's configuration hash.

Run records carry both, so that a resumed calibration reuses a saved score
only when the same judge, asked the same way, would give it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["EvaluatorIdentity", "config_hash", "evaluator_identity"]


@dataclass(frozen=True)
class EvaluatorIdentity:
    """The judge behind an evaluator.

    Attributes
    ----------
    spec_hash
        The model spec's hash (``ModelSpec.spec_hash``), or ``None`` when the
        evaluator does not say which model it asks.
    evaluator_hash
        A hash of everything else that changes a score: the evaluator class,
        its template, system prompt, label words, threshold and calibrator.
    """

    spec_hash: str | None
    evaluator_hash: str


def config_hash(kind: str, config: Mapping[str, object]) -> str:
    """A short, stable sha256 of an evaluator kind and its JSON-ready configuration."""
    payload = json.dumps({"kind": kind, **config}, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def evaluator_identity(evaluator: object) -> EvaluatorIdentity:
    """The identity of any evaluator.

    An evaluator that defines ``identity()`` (judgelab's own do) answers for
    itself. For any other, the spec hash is read from ``evaluator.model.spec``
    when there is one, and the evaluator hash is ``fingerprint()`` when it
    defines one, else a hash of its class name (so a custom evaluator whose
    behaviour depends on its arguments should define ``fingerprint()``).
    """
    own = getattr(evaluator, "identity", None)
    if callable(own):
        ident = own()
        if isinstance(ident, EvaluatorIdentity):
            return ident
    spec = getattr(getattr(evaluator, "model", None), "spec", None)
    spec_hash = getattr(spec, "spec_hash", None)
    fingerprint = getattr(evaluator, "fingerprint", None)
    kind = f"{type(evaluator).__module__}.{type(evaluator).__qualname__}"
    extra = {"fingerprint": str(fingerprint())} if callable(fingerprint) else {}
    return EvaluatorIdentity(spec_hash if isinstance(spec_hash, str) else None, config_hash(kind, extra))
