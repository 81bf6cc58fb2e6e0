"""The one lazy model loader: a judge model named by id or path, loaded only when something is scored.

``calibrate``, ``stress`` and the CLI pass a ``LazyModel`` where a finished run
must be re-analysed without loading the weights. Its spec is read from the
spec file up front; the weights load on the first question.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from judgelab.errors import SpecError

__all__ = ["LazyModel", "spec_is_final"]

logger = logging.getLogger(__name__)


def spec_is_final(spec: Any) -> bool:
    """Whether a spec read before loading is the one the loaded model reports.

    A chat-style spec without a chat template may fall back to raw prompts
    when the model loads (another spec hash), so its hash is known only then.
    """
    prompt = getattr(spec, "prompt", None)
    return spec is not None and not (getattr(prompt, "style", None) == "chat" and not getattr(prompt, "chat_template", None))


class LazyModel:
    """A ``JudgeModel`` stand-in that loads ``model`` (with ``load_model(model, **options)``) on first use.

    Parameters
    ----------
    model
        A model spec id, a spec ``.toml`` or a weights path.
    options
        Keyword arguments for ``judgelab.engine.load_model`` (``backend``,
        ``n_threads``...).

    Calling it (``lazy()``) loads the model and returns the loaded
    ``JudgeModel``, so it is also a loader for ``calibrate(model=...)``.
    Every other ``JudgeModel`` attribute loads the model and answers from it.
    """

    def __init__(self, model: str | Path, options: Mapping[str, Any] | None = None) -> None:
        self.model_id = str(model)
        self.options = dict(options or {})
        self._model: Any = None
        self._label_mass = False

    @cached_property
    def spec_before_loading(self) -> Any:
        """The spec read from its file without loading the weights; ``None`` for a bare weights file."""
        if self.model_id.endswith(".gguf"):
            return None
        try:
            from judgelab.specs import load_spec

            return load_spec(self.model_id)
        except SpecError:  # a weights path or hub id: load_model builds its spec (or says what is wrong)
            return None

    @property
    def spec_hash_before_loading(self) -> str | None:
        """The spec hash scores will carry, when it is certain before loading."""
        if self._model is not None:
            return self._model.spec.spec_hash
        spec = self.spec_before_loading
        return spec.spec_hash if spec_is_final(spec) else None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def spec(self) -> Any:
        """The model spec: read without loading when it is final before loading, else from the loaded model."""
        if self._model is None and spec_is_final(self.spec_before_loading):
            return self.spec_before_loading
        return self.load().spec

    def load(self) -> Any:
        """The loaded ``JudgeModel`` (loaded now on the first call)."""
        if self._model is None:
            from judgelab.engine import load_model

            logger.info("loading %s", self.model_id)
            self._model = load_model(self.model_id, **self.options)
            if self._label_mass:
                self._model.label_mass = True
        return self._model

    __call__ = load

    def set_label_mass(self, on: bool) -> None:
        """Read the labels' share of the next-token probability (now, or once loaded)."""
        self._label_mass = on
        if self._model is not None:
            self._model.label_mass = on

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Any]:
        return self.load().judge_many(prompts, labels)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.load(), name)

    def close(self) -> None:
        """Free the model if it was loaded."""
        if self._model is not None and hasattr(self._model, "close"):
            self._model.close()

    def __str__(self) -> str:
        return self.model_id

    def __repr__(self) -> str:
        return f"LazyModel({self.model_id!r}, loaded={self.loaded})"
