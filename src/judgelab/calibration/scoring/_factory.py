"""Evaluator factories: a picklable recipe that builds an evaluator where it runs.

A distributed run never ships a loaded model: each replica builds its own
evaluator (loading the weights once, on its own node and device) from a small
value that pickles, a model id plus options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TypeGuard

from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError
from judgelab.evaluators import Evaluator, build_evaluator, evaluator_tasks
from judgelab.specs import DEFAULT_MODEL_ID

__all__ = ["EvaluatorFactory", "EvaluatorSource", "default_evaluator_for", "is_factory"]

#: What ``run`` accepts: a ready evaluator, or a zero-argument callable that builds one.
EvaluatorSource = Evaluator | Callable[[], Evaluator]


def default_evaluator_for(task: str, model: JudgeModel, *, hint: str) -> Evaluator:
    """The registry's default evaluator of ``task`` on ``model``; a one-line error ending in ``hint`` if none."""
    if task not in evaluator_tasks():
        raise JudgelabError(f"calibrate cannot build an evaluator for task {task!r} from a model yet; {hint}")
    return build_evaluator(None, model, task=task)


@dataclass(frozen=True)
class EvaluatorFactory:
    """A picklable recipe: load a judge model and wrap it in the evaluator of a task.

    Not the server's ``ServedEvaluatorBuilder`` (a model and a threshold in,
    an evaluator out): this one carries its model as an id and loads it
    where it is called.

    Calling the factory (``factory()``) loads the model with
    ``judgelab.engine.load_model`` and returns the evaluator. The factory is a
    plain value: it pickles, so a Ray replica can build its own evaluator.

    Parameters
    ----------
    model
        A model spec id (``judgelab models``), a spec ``.toml`` or a weights
        path; default the shipped default judge (``judgelab.specs.DEFAULT_MODEL_ID``,
        the tuned ``gemma-3-270m-judge``), as for ``calibrate``. Resolved where
        the factory is called, so the weights must be reachable from every
        node that builds one.
    task
        A task with a default evaluator in the registry (``"fact-check"``:
        ``fact-checking``, ``"relevancy"``: ``relevancy``).
    backend
        ``"llama_cpp"`` (default) or ``"transformers"``.
    model_options
        Keyword arguments for ``load_model`` (``n_threads``, ``n_gpu_layers``,
        ``device``, ``dtype``...).
    evaluator_options
        Keyword arguments for the evaluator (``prompt_template``,
        ``threshold``, ``system``...).

    Examples
    --------
    >>> factory = EvaluatorFactory("gemma-3-270m", "fact-check", model_options={"n_threads": 1})
    >>> evaluator = factory()  # doctest: +SKIP
    """

    model: str = DEFAULT_MODEL_ID
    task: str = "fact-check"
    backend: str = "llama_cpp"
    model_options: Mapping[str, object] = field(default_factory=dict)
    evaluator_options: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.task not in evaluator_tasks():
            raise JudgelabError(
                f"EvaluatorFactory cannot build an evaluator for task {self.task!r}; known tasks: "
                f"{', '.join(evaluator_tasks())}. Pass any picklable zero-argument callable that returns "
                "your evaluator instead."
            )
        object.__setattr__(self, "model", str(self.model))
        object.__setattr__(self, "model_options", dict(self.model_options))
        object.__setattr__(self, "evaluator_options", dict(self.evaluator_options))

    def __call__(self) -> Evaluator:
        from judgelab.engine import load_model

        model = load_model(self.model, backend=self.backend, **self.model_options)
        return build_evaluator(None, model, task=self.task, **self.evaluator_options)

    def for_replica(self, *, threads: int | None = None, gpus: float = 0) -> "EvaluatorFactory":
        """This factory with a replica's resources filled in where the caller left them unset.

        ``threads`` becomes ``n_threads``; a replica with GPUs offloads every
        layer (llama.cpp ``n_gpu_layers=-1``) or runs on ``device="cuda"``
        (transformers).
        """
        options = dict(self.model_options)
        if threads:
            options.setdefault("n_threads", int(threads))
        if gpus:
            if self.backend == "transformers":
                options.setdefault("device", "cuda")
            else:
                options.setdefault("n_gpu_layers", -1)
        return replace(self, model_options=options)


def is_factory(source: object) -> TypeGuard[Callable[[], Evaluator]]:
    """Whether ``source`` builds an evaluator (a callable without ``evaluate``), not is one."""
    return callable(source) and not callable(getattr(source, "evaluate", None)) and not callable(
        getattr(source, "evaluate_many", None)
    )
