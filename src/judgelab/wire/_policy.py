"""Binding a calibrated policy to the evaluators that ask its question (``serve``, ``mcp``, the pytest plugin).

A policy is calibrated for one judge (its model spec hash) and one question
(its template hash: evaluator class, template, system prompt, labels). Binding
checks the spec hash against the loaded model and finds the evaluators whose
template hash is the policy's; the server and MCP refuse to start when there
is none (``PolicyMismatchError`` naming what was served), the pytest plugin
gives the policy to each evaluator it builds that asks that question.

A registered evaluator's template hash is read from its name and the model
spec (``registered_template_hashes``, through
``judgelab.evaluators.evaluator_config``), without building it; only an
evaluator whose configuration judgelab cannot read (a plugin's, or one the
caller supplies) is built on the real model to read its hash (``template_hash_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Protocol, runtime_checkable

from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError, PolicyMismatchError
from judgelab.evaluators import build_evaluator, evaluator_config, registered_evaluator

__all__ = [
    "BoundPolicy", "PolicyTaker", "apply_policy", "bind_policy", "policy_applies", "policy_summary", "registered_template_hashes", "template_hash_of",
]


class BoundPolicy(Protocol):
    """What binding reads of a policy (``judgelab.calibration.Policy``)."""

    @property
    def task(self) -> str: ...

    @property
    def spec_hash(self) -> str | None: ...

    @property
    def template_hash(self) -> str | None: ...

    def check(self, *, spec_hash: str | None, template_hash: str | None, where: str = ...) -> None: ...

    def summary(self) -> dict[str, object]: ...


@runtime_checkable
class PolicyTaker(Protocol):
    """An evaluator that can decide with a calibrated policy (``YesNoEvaluator.set_policy``)."""

    def set_policy(self, policy: BoundPolicy) -> None: ...


def apply_policy(evaluator: object, policy: BoundPolicy) -> None:
    """Give ``policy`` to ``evaluator`` (``set_policy``), which then decides pass/fail/abstain with it.

    Raises
    ------
    JudgelabError
        When ``evaluator`` has no ``set_policy`` (an evaluator the caller
        supplies with a template hash but no way to take a policy).
    """
    if not isinstance(evaluator, PolicyTaker):
        raise JudgelabError(f"The evaluator {type(evaluator).__name__} asks the question the policy was calibrated for "
                            "but has no set_policy(policy), so it cannot decide with it. Give it one (as "
                            "judgelab.evaluators.YesNoEvaluator has), or serve it without --policy.")
    evaluator.set_policy(policy)


def registered_template_hashes(names: Iterable[str], model: JudgeModel) -> dict[str, str | None]:
    """``{name: template hash}`` of registered evaluators on ``model``, read from the name and ``model.spec``.

    No evaluator is built for an entry that declares its configuration
    (judgelab's template evaluators); an entry registered without one (a
    plugin's) is built once on ``model`` to read its hash. ``None`` for a
    name whose question only its ``@`` argument tells (``cascade``, ``jury``).
    """
    out: dict[str, str | None] = {}
    for name in names:
        config = evaluator_config(name, model.spec)
        if config is not None:
            out[name] = config.template_hash
        elif ":" in name or registered_evaluator(name.partition("+")[0].partition("@")[0]).argument is not None:
            out[name] = None
        else:
            out[name] = template_hash_of(partial(build_evaluator, name, model))
    return out


def template_hash_of(build: Callable[[], object]) -> str | None:
    """The template hash of the evaluator ``build()`` makes (one the caller supplies); ``None`` when it has none."""
    try:
        return getattr(build(), "template_hash", None)
    except (JudgelabError, TypeError):  # an ensemble has no template of its own, or needs other arguments
        return None


def policy_applies(policy: BoundPolicy, evaluator: object) -> bool:
    """Whether ``policy`` was calibrated for the question ``evaluator`` asks (same template hash)."""
    return policy.template_hash is not None and policy.template_hash == getattr(evaluator, "template_hash", None)


def bind_policy(policy: BoundPolicy, model: JudgeModel, hashes: Mapping[str, str | None]) -> list[str]:
    """The names of the evaluators that ask the question ``policy`` was calibrated for.

    Parameters
    ----------
    policy
        The calibrated policy.
    model
        The loaded ``JudgeModel`` (its ``spec.spec_hash`` must be the policy's).
    hashes
        Evaluator name -> its template hash on ``model`` (``None`` when it has
        none): ``registered_template_hashes``, plus ``template_hash_of`` for
        evaluators the caller supplies.

    Raises
    ------
    PolicyMismatchError
        When the policy's spec hash is not the model's, it names no template
        hash, or no evaluator asks the question it was calibrated for.
    """
    policy.check(spec_hash=model.spec.spec_hash, template_hash=policy.template_hash, where=f"model {model.id}")
    if policy.template_hash is None:
        raise PolicyMismatchError(
            f"The policy for task {policy.task!r} names no template hash (its scores were written before judgelab "
            "recorded one), so it cannot be matched to an evaluator. Rescore the set and refit it "
            "(judgelab calibrate, then judgelab policy RUN).",
            expected={"spec_hash": policy.spec_hash, "template_hash": None},
            actual={"spec_hash": model.spec.spec_hash, "template_hash": None},
        )
    names = [name for name, h in hashes.items() if h == policy.template_hash]
    if not names:
        served = ", ".join(f"{n} {h}" for n, h in hashes.items() if h is not None)
        raise PolicyMismatchError(
            f"The policy for task {policy.task!r} (template hash {policy.template_hash}) was calibrated for no "
            f"evaluator this server runs (served: {served}). Serve the evaluator it was calibrated with, or "
            "calibrate a policy for one of these (judgelab calibrate, then judgelab policy RUN).",
            expected={"spec_hash": policy.spec_hash, "template_hash": policy.template_hash},
            actual={"spec_hash": model.spec.spec_hash, "template_hash": None},
        )
    return names


def policy_summary(policy: BoundPolicy, applies_to: object) -> dict[str, object]:
    """The policy as protocols report it: its summary, template hash and the evaluators it decides for."""
    return {**policy.summary(), "template_hash": policy.template_hash, "applies_to": applies_to}
