"""The one lazy model loader: a judge model loaded only when something is scored.

``calibrate``, ``stress``, the CLI and the pytest plugin hold their judge as a
``LazyModel``, so that a finished run is re-analysed, and a test session that
asks nothing of the judge ends, without loading the weights. Its spec is read
up front (from the spec file, or the loader's ``spec``); the weights load on
the first question.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, TypeGuard, cast

from judgelab.engine._judge_model import JudgeModel
from judgelab.engine._model import BackendJudgeModel, Judgment
from judgelab.errors import SpecError
from judgelab.specs import ModelSpec

__all__ = ["LazyModel", "ModelSource", "spec_is_final"]

ModelSource = str | Path | JudgeModel | Callable[[], JudgeModel]
"""What ``LazyModel`` takes: a spec id or path, a loaded model, or a loader (another ``LazyModel`` included)."""

logger = logging.getLogger(__name__)


def spec_is_final(spec: ModelSpec | None) -> TypeGuard[ModelSpec]:
    """Whether a spec read before loading is the one the loaded model reports.

    A chat-style spec without a chat template may fall back to raw prompts
    when the model loads (another spec hash), so its hash is known only then.
    """
    prompt = getattr(spec, "prompt", None)
    return spec is not None and not (getattr(prompt, "style", None) == "chat" and not getattr(prompt, "chat_template", None))


def _is_loaded(model: object) -> TypeGuard[JudgeModel]:
    return hasattr(model, "judge_many") and not isinstance(model, LazyModel)


class LazyModel:
    """A ``JudgeModel`` stand-in that loads its model on first use.

    Parameters
    ----------
    model
        A model spec id, a spec ``.toml`` or a weights path (loaded with
        ``judgelab.engine.load_model(model, **options)``); a loader (a
        callable returning a loaded ``JudgeModel``, optionally with a ``spec``
        attribute, another ``LazyModel`` included); or a loaded ``JudgeModel``
        (used as is, never closed here).
    options
        Keyword arguments for ``load_model`` (``backend``, ``n_threads``...),
        for a model given by id or path.

    Calling it (``lazy()``) loads the model and returns the loaded
    ``JudgeModel``, so it is also a loader for ``calibrate(model=...)``.
    Every other ``JudgeModel`` attribute loads the model and answers from it.
    ``close()`` closes only a model it loaded itself.
    """

    def __init__(self, model: ModelSource, options: Mapping[str, Any] | None = None) -> None:
        self.source = model  # what the caller passed (a distributed executor ships an id or path)
        self.options = dict(options or {})
        self._named = isinstance(model, (str, Path))
        self._model: JudgeModel | None = model if _is_loaded(model) else None
        self._owned = False
        self._label_mass = False
        self.used = False  # whether anything asked for the loaded model

    @property
    def model_id(self) -> str:
        """The id or path it was given, else the spec's id."""
        if self._named:
            return str(self.source)
        return getattr(self.spec_before_loading, "id", None) or str(self.source)

    @cached_property
    def spec_before_loading(self) -> ModelSpec | None:
        """The spec known without loading the weights; ``None`` for a bare weights file or a loader without one."""
        if self._model is not None:
            return self._model.spec
        if isinstance(self.source, LazyModel):
            return self.source.spec_before_loading
        if not self._named:
            spec: ModelSpec | None = getattr(self.source, "spec", None)  # a loader may say its spec
            return spec
        if str(self.source).endswith(".gguf"):
            return None
        try:
            from judgelab.specs import load_spec

            return load_spec(str(self.source))
        except SpecError:  # a weights path or hub id: load_model builds its spec (or says what is wrong)
            return None

    @property
    def spec_hash_before_loading(self) -> str | None:
        """The spec hash scores will carry, when it is certain before loading."""
        if self._model is not None:
            loaded_hash: str | None = self._model.spec.spec_hash
            return loaded_hash
        spec = self.spec_before_loading
        return spec.spec_hash if spec_is_final(spec) else None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def spec(self) -> ModelSpec:
        """The model spec: read without loading when it is final before loading, else from the loaded model."""
        known = self.spec_before_loading
        if self._model is None and spec_is_final(known):
            return known
        return self.load().spec

    def load(self) -> JudgeModel:
        """The loaded ``JudgeModel`` (loaded now on the first call)."""
        self.used = True
        if self._model is None:
            if self._named:
                from judgelab.engine._loading import load_model

                logger.info("loading %s", self.source)
                self._model = load_model(str(self.source), **self.options)
            else:
                self._model = cast(Callable[[], JudgeModel], self.source)()
            self._owned = True
            if self._label_mass:
                _set_label_mass(self._model, True)
        return self._model

    __call__ = load

    def set_label_mass(self, on: bool) -> None:
        """Read the labels' share of the next-token probability (now, or once loaded)."""
        self._label_mass = on
        if self._model is not None:
            _set_label_mass(self._model, on)

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Judgment]:
        return self.load().judge_many(prompts, labels)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.load(), name)

    def close(self) -> None:
        """Free the model if this loader loaded it."""
        if self._owned and self._model is not None and hasattr(self._model, "close"):
            self._model.close()

    def __str__(self) -> str:
        return self.model_id

    def __repr__(self) -> str:
        return f"LazyModel({self.model_id!r}, loaded={self.loaded})"


def _set_label_mass(model: JudgeModel, on: bool) -> None:
    """Read the labels' share of the next-token probability (``BackendJudgeModel.label_mass``; other models have none)."""
    if isinstance(model, BackendJudgeModel):
        model.label_mass = on
