"""A calibrated pass/fail/abstain policy on the server (``judgelab serve --policy``).

At start-up the policy is matched to the loaded judge: its model spec hash
must be the model's, and its template hash one of the ``/v1/evaluate``
evaluators'; otherwise the server refuses to start (``PolicyMismatchError``
naming both). The matching evaluators then decide with the policy
(``metadata.decision``); the other protocols report the policy in their
``judgelab`` field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError, PolicyMismatchError

__all__ = ["bind_policy", "policy_extra"]


def _template_hash(factory, model: JudgeModel) -> str | None:
    try:
        return getattr(factory(model, 0.5), "template_hash", None)
    except (JudgelabError, TypeError):  # an ensemble (cascade, jury) has no template of its own
        return None


def bind_policy(policy: Any, model: JudgeModel, factories: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Factories whose evaluators decide with ``policy``, and the names they apply to.

    Raises
    ------
    PolicyMismatchError
        When the policy's spec hash is not the model's, or no evaluator asks
        the question (template hash) the policy was calibrated for.
    """
    policy.check(spec_hash=model.spec.spec_hash, template_hash=policy.template_hash, where=f"model {model.id}")
    if policy.template_hash is None:
        raise PolicyMismatchError(
            f"The policy for task {policy.task!r} names no template hash (its scores were written before judgelab "
            "recorded one), so the server cannot tell which evaluator it belongs to. Rescore the set and refit it "
            "(judgelab calibrate, then judgelab policy RUN).",
            expected={"spec_hash": policy.spec_hash, "template_hash": None},
            actual={"spec_hash": model.spec.spec_hash, "template_hash": None},
        )
    hashes = {name: _template_hash(factory, model) for name, factory in factories.items()}
    names = [name for name, h in hashes.items() if h == policy.template_hash]
    if not names:
        served = ", ".join(f"{n} {h}" for n, h in hashes.items())
        raise PolicyMismatchError(
            f"The policy for task {policy.task!r} was calibrated for template hash {policy.template_hash}, but no "
            f"evaluator of this server asks that question (served: {served}). Serve the evaluator it was "
            "calibrated with, or calibrate a policy for one of these.",
            expected={"spec_hash": policy.spec_hash, "template_hash": policy.template_hash},
            actual={"spec_hash": model.spec.spec_hash, "template_hash": None},
        )
    out = dict(factories)
    for name in names:
        out[name] = _with_policy(factories[name], policy)
    return out, names


def _with_policy(factory, policy):
    def make(model, threshold):
        evaluator = factory(model, threshold)
        evaluator.set_policy(policy)
        return evaluator

    return make


def policy_extra(state: Any) -> dict[str, Any]:
    """``{"policy": ...}`` for a protocol's ``judgelab`` field, or ``{}`` without a policy."""
    policy = getattr(state.config, "policy", None)
    if policy is None:
        return {}
    return {"policy": {**policy.summary(), "template_hash": policy.template_hash,
                       "applies_to": "/v1/evaluate " + ", ".join(getattr(state, "policy_evaluators", []) or [])}}
