"""The one registry of named evaluators.

Calibration, stress, tuning, the server, the MCP server, the pytest plugin and
the CLI all build evaluators by name through this module, so a name means the
same evaluator everywhere. A name is one of the registered names, optionally
followed by ``+fenced`` (the fenced template of that evaluator), by
``@ARG`` for an evaluator that takes one argument in its name (``cascade@cascade.json``,
``jury@gemma-3-270m,smollm2-135m``), or
``module:callable`` naming a function that takes the model and returns an
evaluator.

Each entry builds from a loaded ``JudgeModel`` plus keyword options
(``threshold``, ``calibrator``, ``policy``, ``prompt_template``...), so the
server can pass a threshold and calibration can pass nothing. A template
entry also says, from the model spec alone, what it would ask and how it
would decide (``evaluator_config``: its identity and template hash), so
calibration, the server and MCP never build an evaluator only to read them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError
from judgelab.evaluators._spi import Evaluator
from judgelab.evaluators._template_config import TemplateConfig

__all__ = [
    "RegisteredEvaluator",
    "build_evaluator",
    "default_evaluator_name",
    "evaluator_config",
    "evaluator_names",
    "register_evaluator",
    "registered_evaluator",
]

EvaluatorBuilder = Callable[..., Evaluator]
"""``build(model, **options) -> Evaluator``."""

ConfigReader = Callable[..., TemplateConfig]
"""``config(spec, **options) -> TemplateConfig``: what ``build(model, **options)`` asks, for a model with ``spec``."""


@dataclass(frozen=True)
class RegisteredEvaluator:
    """A named way to build an evaluator from a model.

    ``task`` is the labelled-set task the evaluator scores (``fact-check``,
    ``relevancy``), or ``None`` for evaluators that answer other questions.
    ``config`` reads, from the model spec and the same options, the
    ``TemplateConfig`` the built evaluator would have; ``None`` when only
    building tells (an ensemble: its stages' models).
    """

    name: str
    build: EvaluatorBuilder
    task: str | None = None
    description: str = ""
    argument: str | None = None  # the option that ``NAME@ARG`` sets
    config: ConfigReader | None = None


_REGISTRY: dict[str, RegisteredEvaluator] = {}
_TASK_DEFAULTS: dict[str, str] = {}


def register_evaluator(
    name: str,
    build: EvaluatorBuilder,
    *,
    task: str | None = None,
    description: str = "",
    default_for_task: bool = False,
    replace: bool = False,
    argument: str | None = None,
    config: ConfigReader | None = None,
) -> RegisteredEvaluator:
    """Register ``build(model, **options)`` under ``name``; return the entry.

    ``default_for_task`` makes it the evaluator that scores ``task`` rows when
    no evaluator is named. Registering a taken name raises unless ``replace``.
    ``argument`` names the option that ``NAME@ARG`` sets (as a string).
    ``config(spec, **options)`` returns the built evaluator's ``TemplateConfig``
    without a model (see ``evaluator_config``).
    """
    if not name or "+" in name or ":" in name or "@" in name:
        raise JudgelabError(f"Evaluator name {name!r} must be non-empty and contain none of '+', ':', '@'.")
    if name in _REGISTRY and not replace:
        raise JudgelabError(f"An evaluator named {name!r} is already registered; pass replace=True to replace it.")
    entry = RegisteredEvaluator(name=name, build=build, task=task, description=description, argument=argument,
                                config=config)
    _REGISTRY[name] = entry
    if default_for_task:
        if task is None:
            raise JudgelabError(f"Evaluator {name!r} cannot be a task default without a task.")
        _TASK_DEFAULTS[task] = name
    return entry


def evaluator_names() -> tuple[str, ...]:
    """The registered names, in registration order."""
    return tuple(_REGISTRY)


def registered_evaluator(name: str) -> RegisteredEvaluator:
    """The entry for ``name`` (without modifiers); a one-line error naming the known ones otherwise."""
    entry = _REGISTRY.get(name)
    if entry is None:
        raise JudgelabError(
            f"Unknown evaluator {name!r}; known: {', '.join(_REGISTRY)}, any of them with '+fenced', "
            "or 'module:callable' that takes the model."
        )
    return entry


def default_evaluator_name(task: str) -> str:
    """The evaluator that scores ``task`` rows when none is named."""
    name = _TASK_DEFAULTS.get(task)
    if name is None:
        raise JudgelabError(
            f"No default evaluator for task {task!r}; name one ({', '.join(_REGISTRY)}) "
            "or pass an Evaluator."
        )
    return name


def _split_name(name: str) -> tuple[str, bool]:
    base, _, suffix = name.partition("+")
    if suffix not in ("", "fenced"):
        raise JudgelabError(f"Unknown evaluator modifier {suffix!r} in {name!r}; the only one is '+fenced'.")
    return base, bool(suffix)


def _import_builder(spec: str) -> EvaluatorBuilder:
    module, _, attr = spec.partition(":")
    try:
        builder: EvaluatorBuilder = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise JudgelabError(f"Cannot load evaluator {spec!r}: {exc}. Give 'module:callable'.") from exc
    return builder


def _resolve(name: str | None, task: str | None, options: dict[str, Any]
             ) -> tuple[str, RegisteredEvaluator | None, dict[str, Any], bool]:
    """``(base name, entry or None for module:callable, options with the @ARG, fenced?)`` for ``name``."""
    if name is None:
        if task is None:
            raise JudgelabError("build_evaluator needs an evaluator name or a task.")
        name = default_evaluator_name(task)
    base, fence = _split_name(name)
    if ":" in base:
        return base, None, options, fence
    base, at, arg = base.partition("@")
    entry = registered_evaluator(base)
    if at:
        if entry.argument is None:
            raise JudgelabError(f"Evaluator {base!r} takes no '@' argument (got {name!r}).")
        options = {entry.argument: arg, **options}
    return base, entry, options, fence


def build_evaluator(name: str | None, model: JudgeModel, *, task: str | None = None, **options: Any) -> Evaluator:
    """Build the evaluator called ``name`` for ``model``.

    ``name`` may be ``None`` (the default for ``task``), a registered name,
    ``NAME+fenced``, or ``module:callable``. ``options`` go to the builder.
    """
    base, entry, options, fence = _resolve(name, task, options)
    builder = _import_builder(base) if entry is None else entry.build
    evaluator = builder(model, **options)
    if fence:
        from judgelab.evaluators._fence import fenced

        evaluator = fenced(evaluator)
    return evaluator


def evaluator_config(name: str | None, spec: Any = None, *, task: str | None = None,
                     **options: Any) -> TemplateConfig | None:
    """What ``build_evaluator(name, model, task=task, **options)`` would ask and how it would decide, unbuilt.

    Parameters
    ----------
    name, task, options
        As for ``build_evaluator``.
    spec
        The model spec of the model it would be built on (``None`` when not
        known, a bare weights file): only an entry whose prompt comes from the
        spec reads it (``bespoke-minicheck``).

    Returns
    -------
    TemplateConfig or None
        Its ``template_hash`` and ``identity(spec_hash)`` equal the built
        evaluator's; ``None`` when only building tells (``module:callable``,
        an ensemble such as ``cascade@FILE``).
    """
    _, entry, options, fence = _resolve(name, task, options)
    if entry is None or entry.config is None:
        return None
    config = entry.config(spec, **options)
    return config.fenced() if fence else config


def _fact_checking(model: JudgeModel, **options: Any) -> Evaluator:
    from judgelab.evaluators.fact_checking import FactCheckingEvaluator

    return FactCheckingEvaluator(model, **options)


def _fact_checking_sentences(model: JudgeModel, **options: Any) -> Evaluator:
    from judgelab.evaluators.fact_checking import FactCheckingEvaluator

    return FactCheckingEvaluator(model, decompose=True, **options)


def _bespoke_minicheck(model: JudgeModel, threshold: float = 0.5, **options: Any) -> Evaluator:
    from judgelab.evaluators.fact_checking import FactCheckingEvaluator

    return FactCheckingEvaluator.for_bespoke_minicheck(model, threshold, **options)


def _fact_checking_config(spec: Any, **options: Any) -> TemplateConfig:
    from judgelab.evaluators.fact_checking import FactCheckingEvaluator

    return FactCheckingEvaluator.config_for(**options)


def _fact_checking_sentences_config(spec: Any, **options: Any) -> TemplateConfig:
    from judgelab.evaluators.fact_checking import FactCheckingEvaluator

    return FactCheckingEvaluator.config_for(decompose=True, **options)


def _bespoke_minicheck_config(spec: Any, threshold: float = 0.5, **options: Any) -> TemplateConfig:
    from judgelab.evaluators.fact_checking import FactCheckingEvaluator

    return FactCheckingEvaluator.bespoke_config(spec, threshold, **options)


def _relevancy_config(spec: Any, **options: Any) -> TemplateConfig:
    from judgelab.evaluators.relevancy import RelevancyEvaluator

    return RelevancyEvaluator.config_for(**options)


def _relevancy(model: JudgeModel, **options: Any) -> Evaluator:
    from judgelab.evaluators.relevancy import RelevancyEvaluator

    return RelevancyEvaluator(model, **options)


register_evaluator(
    "fact-checking", _fact_checking, task="fact-check", default_for_task=True, config=_fact_checking_config,
    description="Is the claim supported by the documents? (Spring AI FactCheckingEvaluator)",
)
register_evaluator(
    "fact-checking-sentences", _fact_checking_sentences, task="fact-check", config=_fact_checking_sentences_config,
    description="Fact-checking sentence by sentence, each against its 3 best windows of 3 document sentences.",
)
register_evaluator(
    "bespoke-minicheck", _bespoke_minicheck, task="fact-check", config=_bespoke_minicheck_config,
    description="Fact-checking with MiniCheck's system prompt and 'Document: ...\\nClaim: ...'.",
)
register_evaluator(
    "relevancy", _relevancy, task="relevancy", default_for_task=True, config=_relevancy_config,
    description="Is the response in line with the query and the context? (Spring AI RelevancyEvaluator)",
)

# "cascade" and "jury" are registered by judgelab.evaluators._ensembles (they build evaluators by name).
