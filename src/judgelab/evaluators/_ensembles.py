"""The evaluators made of other evaluators: ``cascade`` and ``jury``, built and registered by name.

They build their stages (members) through the registry, so they live apart from
it (``_registry`` never imports them; importing ``judgelab.evaluators`` registers them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from judgelab.engine import JudgeModel
from judgelab.errors import ParameterError
from judgelab.evaluators._policy import Policy, load_cascade
from judgelab.evaluators._registry import build_evaluator, evaluator_names, register_evaluator
from judgelab.evaluators.cascade import Cascade
from judgelab.evaluators.jury import Combine, Jury

__all__ = ["build_cascade", "load_stage_models"]


def load_stage_models(model: JudgeModel | None, policy: Policy, **model_options: Any) -> list[JudgeModel | None]:
    """The models of a fitted cascade's stages: ``None`` where ``model``'s spec is the stage's, else loaded.

    A stage's model is loaded from its spec id (``stage.model``) with
    ``model_options``; a model used by several stages is loaded once. The
    caller owns the loaded models (close them when done).
    """
    from judgelab.engine import load_model

    spec_hash = getattr(getattr(model, "spec", None), "spec_hash", None)
    loaded: dict[str, JudgeModel] = {}
    out: list[JudgeModel | None] = []
    for k, st in enumerate(policy.stages):
        if model is not None and (st.spec_hash == spec_hash or (st.spec_hash is None and st.model == getattr(model, "id", None))):
            out.append(None)
            continue
        if not st.model:
            raise ParameterError(f"Stage {k + 1} of the cascade ({st.name}) names no model; pass its evaluator "
                                 "(Cascade(stages, policy=...)).")
        if st.model not in loaded:
            loaded[st.model] = load_model(st.model, **model_options)
        out.append(loaded[st.model])
    return out


def build_cascade(model: JudgeModel, policy: Policy, *, stage_models: Sequence[JudgeModel | None] | None = None,
                  threshold: float | None = None, **model_options: Any) -> Cascade:
    """A ``Cascade`` of a fitted cascade's stages, each the registered evaluator of its task on its model.

    ``model`` judges the stages whose spec it has; ``stage_models`` (from
    ``load_stage_models``) the others (loaded here when not given). A stage
    is built with the registered evaluator named in the cascade (else the
    task's default); its hashes are then checked against the cascade's.
    ``threshold`` is accepted for the registry's callers and not used (the
    bands decide).
    """
    models = list(stage_models) if stage_models is not None else load_stage_models(model, policy, **model_options)
    stages = []
    for st, m in zip(policy.stages, models):
        name = st.evaluator if st.evaluator in evaluator_names() else None
        stages.append(build_evaluator(name, model if m is None else m, task=policy.task))
    return Cascade(stages, policy=policy)


def _cascade(model: JudgeModel, policy: Policy | str | None = None, **options: Any) -> Cascade:
    if policy is None:
        raise ParameterError("The 'cascade' evaluator needs policy= (a fitted cascade: "
                             "judgelab.evaluators.load_cascade('cascade.json')), or its file as 'cascade@FILE'.")
    if isinstance(policy, str):
        policy = load_cascade(policy)
    return build_cascade(model, policy, **options)


def _jury(model: JudgeModel, members: str | Sequence[str] = ("gemma-3-270m", "smollm2-135m"), combine: Combine = "mean-logit",
          evaluator: str | None = None, task: str = "fact-check", **model_options: Any) -> Jury:
    from judgelab.engine import load_model

    if isinstance(members, str):
        members = tuple(m.strip() for m in members.split(",") if m.strip())
    own = getattr(model, "id", None)
    models = [model if m == own else load_model(m, **model_options) for m in members]
    jury = Jury([build_evaluator(evaluator, m, task=task) for m in models], combine=combine, names=list(members))
    jury.owned = [m for m, name in zip(models, members) if name != own]
    return jury


register_evaluator(
    "cascade", _cascade, task="fact-check", argument="policy",
    description="A fitted cascade of judges (policy=load_cascade('cascade.json')): cheap stage first, escalate the rest.",
)
register_evaluator(
    "jury", _jury, task="fact-check", argument="members",
    description="A jury of judges of several families (members=..., combine='mean-logit' or 'vote').",
)
