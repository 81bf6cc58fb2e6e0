"""A calibrated pass/fail/abstain policy on the server (``judgelab serve --policy``).

At start-up the policy is bound to the loaded judge (``judgelab.wire.bind_policy``):
its model spec hash must be the model's, and its template hash one of the
``/v1/evaluate`` evaluators'; otherwise the server refuses to start
(``PolicyMismatchError`` naming both). The matching evaluators then decide
with the policy (``metadata.decision``); the other protocols report the policy
in their ``judgelab`` field.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import partial
from typing import TYPE_CHECKING

from judgelab.engine import JudgeModel
from judgelab.evaluators import Evaluator
from judgelab.server._evaluate import ServedEvaluatorBuilder
from judgelab.wire import BoundPolicy, apply_policy, bind_policy, policy_summary, registered_template_hashes, template_hash_of

if TYPE_CHECKING:
    from judgelab.server._state import JudgeState

__all__ = ["bind_factories", "policy_extra"]


def bind_factories(
    policy: BoundPolicy, model: JudgeModel, factories: Mapping[str, ServedEvaluatorBuilder],
    custom: Collection[str] = (),
) -> tuple[dict[str, ServedEvaluatorBuilder], list[str]]:
    """Factories whose evaluators decide with ``policy``, and the names they apply to.

    A registered evaluator's template hash is read from its name and the
    model spec; only the ``custom`` names (``create_app(evaluators=...)``,
    opaque to judgelab) are built once to read theirs.

    Raises
    ------
    PolicyMismatchError
        When the policy's spec hash is not the model's, or no evaluator asks
        the question (template hash) the policy was calibrated for.
    """
    hashes = registered_template_hashes([n for n in factories if n not in custom], model)
    hashes.update({n: template_hash_of(partial(factories[n], model, 0.5)) for n in factories if n in custom})
    names = bind_policy(policy, model, hashes)
    out = dict(factories)
    for name in names:
        out[name] = _with_policy(factories[name], policy)
    return out, names


def _with_policy(factory: ServedEvaluatorBuilder, policy: BoundPolicy) -> ServedEvaluatorBuilder:
    def make(model: JudgeModel, threshold: float) -> Evaluator:
        evaluator = factory(model, threshold)
        apply_policy(evaluator, policy)
        return evaluator

    return make


def policy_extra(state: JudgeState) -> dict[str, object]:
    """``{"policy": ...}`` for a protocol's ``judgelab`` field, or ``{}`` without a policy."""
    policy = state.config.policy
    if policy is None:
        return {}
    return {"policy": policy_summary(policy, "/v1/evaluate " + ", ".join(state.policy_evaluators))}
