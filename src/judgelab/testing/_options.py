"""The plugin's command-line options, their ini-file twins, and the ``Settings`` they make.

Every option ``--judgelab-NAME`` has an ini key ``judgelab_NAME``; the command
line wins. Nothing here imports a model or an evaluator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import pytest

__all__ = ["ABSTAIN_MODES", "Settings", "add_options", "read_settings"]

ABSTAIN_MODES = ("skip", "fail")
"""What a test does when a policy's judge abstains: skipped (the default) or failed."""

N = TypeVar("N", int, float)

_OPTIONS: tuple[tuple[str, str, Literal["string"]], ...] = (
    ("model", "judge model id, spec .toml or .gguf path (default: judgelab's default judge)", "string"),
    ("policy", "a calibrated pass/fail/abstain policy.json (judgelab policy RUN): evaluators it was "
               "calibrated for decide with it", "string"),
    ("threshold", "pass threshold on the score for evaluators without a policy (default: each evaluator's, 0.5)",
     "string"),
    ("backend", "llama_cpp (default) or transformers", "string"),
    ("threads", "CPU threads for the model (default: the backend's)", "string"),
    ("abstain", "what an abstention does to a test: skip (default) or fail", "string"),
)


@dataclass(frozen=True)
class Settings:
    """How the session's judge is loaded and how checks are decided.

    Attributes
    ----------
    model
        The model id or path; ``None``: ``judgelab.specs.DEFAULT_MODEL_ID``.
    policy
        Path of a ``policy.json``, or ``None``.
    threshold
        Pass threshold given to the evaluators the fixtures build; ``None``: theirs.
    backend
        The engine backend.
    threads
        CPU threads, or ``None`` for the backend's default.
    abstain
        ``"skip"`` or ``"fail"``.
    """

    model: str | None = None
    policy: Path | None = None
    threshold: float | None = None
    backend: str = "llama_cpp"
    threads: int | None = None
    abstain: str = "skip"


def add_options(parser: pytest.Parser) -> None:
    """Register ``--judgelab-*`` and the ``judgelab_*`` ini keys."""
    group = parser.getgroup("judgelab", "judgelab: LLM judge checks (docs/testing.md)")
    for name, help_text, kind in _OPTIONS:
        group.addoption(f"--judgelab-{name}", dest=f"judgelab_{name}", default=None, help=help_text)
        parser.addini(f"judgelab_{name}", help=help_text, type=kind, default=None)


def _raw(config: pytest.Config, name: str) -> tuple[object, str]:
    """The option's value and where it came from (for messages)."""
    value = config.getoption(f"judgelab_{name}")
    if value is not None:
        return value, f"--judgelab-{name}"
    value = config.getini(f"judgelab_{name}")
    return (value or None), f"ini option judgelab_{name}"


def _number(text: str, where: str, cast: Callable[[str], N], ok: Callable[[N], bool], must: str) -> N:
    try:
        value = cast(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise pytest.UsageError(f"{where} must be {must}, got {text!r}.")
    return value


def read_settings(config: pytest.Config) -> Settings:
    """The settings from the command line and the ini file; ``pytest.UsageError`` naming a bad one."""
    values: dict[str, Any] = {}
    model, _ = _raw(config, "model")
    if model:
        values["model"] = str(model)
    policy, where = _raw(config, "policy")
    if policy:
        path = Path(str(policy))
        if where.startswith("ini") and not path.is_absolute() and config.inipath is not None:
            path = config.inipath.parent / path
        if not path.is_file():
            raise pytest.UsageError(f"{where} names {str(path)!r}, which is not a file; "
                                    "write one with 'judgelab policy RUN'.")
        values["policy"] = path
    threshold, where = _raw(config, "threshold")
    if threshold is not None:
        values["threshold"] = _number(str(threshold), where, float, lambda v: 0.0 <= v <= 1.0, "a number in [0, 1]")
    backend, _ = _raw(config, "backend")
    if backend:
        values["backend"] = str(backend)
    threads, where = _raw(config, "threads")
    if threads is not None:
        values["threads"] = _number(str(threads), where, int, lambda v: v >= 1, "an integer >= 1")
    abstain, where = _raw(config, "abstain")
    if abstain:
        if abstain not in ABSTAIN_MODES:
            raise pytest.UsageError(f"{where} must be one of {', '.join(ABSTAIN_MODES)}, got {abstain!r}.")
        values["abstain"] = abstain
    return Settings(**values)
