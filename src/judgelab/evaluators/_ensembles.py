"""The evaluators made of other evaluators: ``cascade`` and ``jury``, their registry entries.

They build their stages (members) through the registry, so they live apart from
it; ``_builtins.BUILTIN_EVALUATORS`` names their entries (``CASCADE``, ``JURY``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from judgelab.engine import JudgeModel
from judgelab.errors import ParameterError, ParameterTypeError
from judgelab.evaluators._policy import Policy, load_cascade
from judgelab.evaluators._registry import RegisteredEvaluator, build_evaluator, evaluator_names
from judgelab.evaluators.cascade import Cascade
from judgelab.evaluators.jury import COMBINE_RULES, Combine, Jury

__all__ = ["CASCADE", "JURY", "build_cascade", "load_stage_models"]


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


def _of(value: object, kind: type | tuple[type, ...], name: str, evaluator: str, must: str) -> None:
    if not isinstance(value, kind):
        raise ParameterTypeError(f"The {name!r} parameter of the {evaluator!r} evaluator must be {must}. "
                                 f"Got {value!r} ({type(value).__name__}) instead.")


def _cascade(model: JudgeModel, /, **options: object) -> Cascade:
    """``cascade``: ``policy`` (a ``Policy`` or its file), ``stage_models``, ``threshold`` (unused); the rest load_model's."""
    policy = options.pop("policy", None)
    if policy is None:
        raise ParameterError("The 'cascade' evaluator needs policy= (a fitted cascade: "
                             "judgelab.evaluators.load_cascade('cascade.json')), or its file as 'cascade@FILE'.")
    if isinstance(policy, str):
        policy = load_cascade(policy)
    _of(policy, Policy, "policy", "cascade", "a Policy (load_cascade('cascade.json')) or its file")
    stage_models = options.pop("stage_models", None)
    if stage_models is not None:
        _of(stage_models, (list, tuple), "stage_models", "cascade", "a sequence of models (or None) per stage")
    options.pop("threshold", None)  # the registry's callers pass one; the bands decide
    model_options: dict[str, Any] = options  # load_model's, checked by its backend's config
    return build_cascade(model, cast(Policy, policy), stage_models=cast("Sequence[JudgeModel | None] | None", stage_models),
                         **model_options)


def _jury(model: JudgeModel, /, **options: object) -> Jury:
    """``jury``: ``members``, ``combine``, ``evaluator``, ``task``; the rest are load_model's options for the members."""
    from judgelab.engine import load_model

    members = options.pop("members", ("gemma-3-270m", "smollm2-135m"))
    if isinstance(members, str):
        members = tuple(m.strip() for m in members.split(",") if m.strip())
    _of(members, (list, tuple), "members", "jury", "model ids, comma-separated or a sequence")
    names = [str(m) for m in cast("Sequence[object]", members)]
    combine = options.pop("combine", "mean-logit")
    if combine not in COMBINE_RULES:
        raise ParameterError(f"The 'combine' parameter of the 'jury' evaluator must be one of "
                             f"{', '.join(COMBINE_RULES)}. Got {combine!r} instead.", name="combine")
    evaluator = options.pop("evaluator", None)
    if evaluator is not None:
        _of(evaluator, str, "evaluator", "jury", "an evaluator name")
    task = options.pop("task", "fact-check")
    _of(task, str, "task", "jury", "a task name")
    own = getattr(model, "id", None)
    model_options: dict[str, Any] = options  # load_model's, checked by its backend's config
    models = [model if m == own else load_model(m, **model_options) for m in names]
    jury = Jury([build_evaluator(cast("str | None", evaluator), m, task=cast(str, task)) for m in models],
                combine=cast(Combine, combine), names=names)
    jury.owned = [m for m, name in zip(models, names) if name != own]
    return jury


CASCADE = RegisteredEvaluator(
    "cascade", _cascade, task="fact-check", argument="policy",
    description="A fitted cascade of judges (policy=load_cascade('cascade.json')): cheap stage first, escalate the rest.",
)
JURY = RegisteredEvaluator(
    "jury", _jury, task="fact-check", argument="members",
    description="A jury of judges of several families (members=..., combine='mean-logit' or 'vote').",
)
