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
server can pass a threshold and calibration can pass nothing; an entry that
declares its options (a template class: its parameters' ``TypedDict``)
refuses any other name with the declared ones listed. A template evaluator
class is named where it is defined, with the class decorator
``registered_as`` (its names and what each presets; the decorator only
attaches them), and registered with ``register_evaluator_class``; its
entries then also say, from the model spec alone, what they would ask and
how they would decide (``evaluator_config``: the class's ``config_for``,
whose identity and template hash are the built evaluator's), so calibration,
the server and MCP never build an evaluator only to read them. Any other
builder (an ensemble, a plugin function) registers with ``register_evaluator``.

The built-in evaluators are one explicit, ordered tuple
(``judgelab.evaluators._builtins.BUILTIN_EVALUATORS``), registered first, in
that order, by ``install_builtins`` when ``judgelab.evaluators`` is imported
(whatever order its modules are imported in); an evaluator a user registers
from their own module comes after them, in registration order, and never
moves a built-in.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError
from judgelab.evaluators._spi import Evaluator
from judgelab.evaluators._template_config import TemplateConfig
from judgelab.specs import ModelSpec

if TYPE_CHECKING:  # the decorator's bound only; _yesno never imports the registry
    from judgelab.evaluators._yesno import YesNoEvaluator

__all__ = [
    "EvaluatorName",
    "RegisteredEvaluator",
    "build_evaluator",
    "default_evaluator_name",
    "evaluator_config",
    "evaluator_names",
    "evaluator_tasks",
    "install_builtins",
    "register_evaluator",
    "register_evaluator_class",
    "registered_as",
    "registered_evaluator",
]


class EvaluatorBuilder(Protocol):
    """``build(model, **options) -> Evaluator``: the options are those a caller gives by name (checked by the builder)."""

    def __call__(self, model: JudgeModel, /, **options: object) -> Evaluator: ...


class ConfigReader(Protocol):
    """``config(spec, **options) -> TemplateConfig``: what ``build(model, **options)`` asks, for a model with ``spec``."""

    def __call__(self, spec: ModelSpec | None, /, **options: object) -> TemplateConfig: ...


@dataclass(frozen=True)
class RegisteredEvaluator:
    """A named way to build an evaluator from a model.

    ``task`` is the labelled-set task the evaluator scores (``fact-check``,
    ``relevancy``), or ``None`` for evaluators that answer other questions.
    ``config`` reads, from the model spec and the same options, the
    ``TemplateConfig`` the built evaluator would have; ``None`` when only
    building tells (an ensemble: its stages' models). ``default_for_task``
    makes it the evaluator that scores ``task`` rows when none is named.
    """

    name: str
    build: EvaluatorBuilder
    task: str | None = None
    description: str = ""
    argument: str | None = None  # the option that ``NAME@ARG`` sets
    config: ConfigReader | None = None
    default_for_task: bool = False


_REGISTRY: dict[str, RegisteredEvaluator] = {}
_TASK_DEFAULTS: dict[str, str] = {}


def _store(entry: RegisteredEvaluator, *, replace: bool) -> RegisteredEvaluator:
    """Add ``entry`` (a replaced name keeps its place); the built-ins are in first."""
    name = entry.name
    if not name or "+" in name or ":" in name or "@" in name:
        raise JudgelabError(f"Evaluator name {name!r} must be non-empty and contain none of '+', ':', '@'.")
    if name in _REGISTRY and not replace:
        raise JudgelabError(f"An evaluator named {name!r} is already registered; pass replace=True to replace it.")
    if entry.default_for_task and entry.task is None:
        raise JudgelabError(f"Evaluator {name!r} cannot be a task default without a task.")
    _REGISTRY[name] = entry
    if entry.default_for_task and entry.task is not None:
        _TASK_DEFAULTS[entry.task] = name
    return entry


def install_builtins(items: "Sequence[type[YesNoEvaluator] | RegisteredEvaluator]") -> None:
    """Register the built-in evaluators (``_builtins.BUILTIN_EVALUATORS``), in their order, before any other entry.

    ``_builtins`` calls it once, when ``judgelab.evaluators`` is imported; an entry registered
    before (none is, in practice) keeps its place after them.
    """
    earlier, defaults = dict(_REGISTRY), dict(_TASK_DEFAULTS)
    _REGISTRY.clear()
    for item in items:
        for entry in (class_entries(item) if isinstance(item, type) else (item,)):
            _store(entry, replace=False)
    _REGISTRY.update({name: entry for name, entry in earlier.items() if name not in _REGISTRY})
    _TASK_DEFAULTS.update(defaults)


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
    return _store(RegisteredEvaluator(name=name, build=build, task=task, description=description, argument=argument,
                                      config=config, default_for_task=default_for_task), replace=replace)


def evaluator_tasks() -> tuple[str, ...]:
    """The tasks with a default evaluator (``calibrate`` can score their rows from a model alone)."""
    return tuple(_TASK_DEFAULTS)


def evaluator_names() -> tuple[str, ...]:
    """The registered names: the built-ins in ``BUILTIN_EVALUATORS``' order, then the others in registration order."""
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
        builder = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise JudgelabError(f"Cannot load evaluator {spec!r}: {exc}. Give 'module:callable'.") from exc
    if not callable(builder):
        raise JudgelabError(f"Cannot load evaluator {spec!r}: {attr} is a {type(builder).__name__}, not a callable. "
                            "Give 'module:callable' that takes the model.")
    checked: EvaluatorBuilder = builder
    return checked


def _resolve(name: str | None, task: str | None, options: dict[str, object]
             ) -> tuple[str, RegisteredEvaluator | None, dict[str, object], bool]:
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


def build_evaluator(name: str | None, model: JudgeModel, *, task: str | None = None, **options: object) -> Evaluator:
    """Build the evaluator called ``name`` for ``model``.

    ``name`` may be ``None`` (the default for ``task``), a registered name,
    ``NAME+fenced``, or ``module:callable``. ``options`` go to the builder;
    a template class's entry checks them against its parameters' ``TypedDict``
    (``ParameterError`` listing the declared names for any other). Typed code
    that knows the class calls it instead: ``FactCheckingEvaluator(model, threshold=0.7)``.
    """
    base, entry, options, fence = _resolve(name, task, options)
    builder = _import_builder(base) if entry is None else entry.build
    evaluator = builder(model, **options)
    if fence:
        from judgelab.evaluators._fence import fenced

        evaluator = fenced(evaluator)
    return evaluator


def evaluator_config(name: str | None, spec: ModelSpec | None = None, *, task: str | None = None,
                     **options: object) -> TemplateConfig | None:
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


PresetOptions = Mapping[str, object] | Callable[[ModelSpec | None], Mapping[str, object]]
"""Options a name sets before the caller's: a mapping, or ``preset(spec)`` for those read from the model spec."""


@dataclass(frozen=True)
class EvaluatorName:
    """One name ``registered_as`` gives a class, with the options it presets.

    ``options`` (a mapping, or a function of the model spec, which may be
    ``None``) go to the class before the caller's own, which override them;
    the name itself is passed as the ``name`` option unless it is the
    class's ``default_name``. ``task``, ``description`` and
    ``default_for_task`` are as for ``register_evaluator``.
    """

    name: str
    task: str | None = None
    description: str = ""
    default_for_task: bool = False
    options: PresetOptions = field(default_factory=dict)

    def preset(self, cls: object, spec: ModelSpec | None) -> dict[str, object]:
        """The options this name sets on ``cls`` for a model with ``spec``, its own name included."""
        options = dict(self.options(spec) if callable(self.options) else self.options)
        if self.name != getattr(cls, "default_name", None):
            options["name"] = self.name
        return options


C = TypeVar("C", bound="type[YesNoEvaluator]")

_NAMES = "_judgelab_evaluator_names"  # the attribute registered_as sets on the class itself


def registered_as(*names: str | EvaluatorName, task: str | None = None, description: str = "",
                  default_for_task: bool = False) -> Callable[[C], C]:
    """A class decorator: name a template evaluator class (``YesNoEvaluator``'s kind) ``names``, in order.

    It only attaches the names; ``register_evaluator_class(cls)`` registers them (the built-in
    classes are registered in ``BUILTIN_EVALUATORS``' order). A plain string takes ``task``,
    ``description`` and ``default_for_task`` from the keywords; an ``EvaluatorName`` says its own
    (and the options it presets: ``fact-checking-sentences`` is ``FactCheckingEvaluator`` with
    ``decompose=True``). Each name builds ``cls(model, **preset, **options)`` and reads its config,
    unbuilt, from ``cls.config_for(**preset, **options)``.

    Examples
    --------
    >>> @registered_as("strict-relevancy", task="relevancy")  # doctest: +SKIP
    ... class StrictRelevancy(RelevancyEvaluator):
    ...     default_template = "..."
    >>> register_evaluator_class(StrictRelevancy)  # doctest: +SKIP
    """
    if not names:
        raise JudgelabError("registered_as needs at least one evaluator name.")

    def attach(cls: C) -> C:
        setattr(cls, _NAMES, tuple(item if isinstance(item, EvaluatorName) else EvaluatorName(
            item, task=task, description=description, default_for_task=default_for_task) for item in names))
        return cls

    return attach


def class_entries(cls: "type[YesNoEvaluator]") -> tuple[RegisteredEvaluator, ...]:
    """The registry entries of a class named by ``registered_as`` (its own names, not a base class's)."""
    named: tuple[EvaluatorName, ...] | None = vars(cls).get(_NAMES)
    if not named:
        raise JudgelabError(f"{cls.__name__} has no evaluator names; decorate it with @registered_as(NAME, ...) "
                            "before registering it.")
    return tuple(RegisteredEvaluator(name=n.name, build=_builder(cls, n), task=n.task, description=n.description,
                                     config=_reader(cls, n), default_for_task=n.default_for_task) for n in named)


def register_evaluator_class(cls: C, *, replace: bool = False) -> C:
    """Register the names ``registered_as`` gave ``cls``, after the built-ins; return ``cls``.

    A user's evaluator, in the user's own module, registers this way (or with this as the outer
    decorator); no built-in moves. Registering a taken name raises unless ``replace`` (a replaced
    name keeps its place).
    """
    for entry in class_entries(cls):
        _store(entry, replace=replace)
    return cls


def _builder(cls: "type[YesNoEvaluator]", named: EvaluatorName) -> EvaluatorBuilder:
    def build(model: JudgeModel, /, **options: object) -> Evaluator:
        return cls(model, cls.checked_config({**named.preset(cls, getattr(model, "spec", None)), **options}))

    return build


def _reader(cls: "type[YesNoEvaluator]", named: EvaluatorName) -> ConfigReader:
    def config(spec: ModelSpec | None, /, **options: object) -> TemplateConfig:
        return cls.checked_config({**named.preset(cls, spec), **options})

    return config
