"""Typed run files: ``metrics.json`` as a versioned pydantic model, read with migration of older versions.

In the way Inspect AI's ``EvalLog`` is a model of its log file, ``MetricsFile``
is the model of a calibrate run's ``metrics.json``: ``meta`` (the run facts)
and ``tasks`` (per task: the shipped threshold, held-out metrics, calibration,
the policy...). The fields that other commands read are typed; everything
else a task writes is kept as it was written (``extra="allow"``), so reading
and writing a file changes nothing.

Versions
--------
1
    The format judgelab has written since metrics.json existed (no
    ``version`` key; a file without one is version 1). ``read_metrics``
    migrates any older version to the current one through ``MIGRATIONS``;
    a file from a newer judgelab is refused with a message saying so.

The score records (``ScoreRecord``, one line of ``scores.jsonl``) and the
policy (``Policy``, ``policy.json``, with its own ``version``) are typed the
same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from judgelab.errors import DataError

__all__ = ["METRICS_VERSION", "MetricsFile", "RunMeta", "TaskMetrics", "TaskThreshold", "read_metrics", "write_metrics"]

#: The ``metrics.json`` format this judgelab writes.
METRICS_VERSION = 1

#: ``{version: migrate(doc) -> doc of version + 1}`` for every older format.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


class RunMeta(BaseModel):
    """The run facts at the top of the report: model, set, rows, options, spec hash."""

    model_config = ConfigDict(extra="allow", frozen=True)

    model: str | None = None
    set: str | None = None
    rows: int | None = None
    seed: int | None = None


class TaskThreshold(BaseModel):
    """The shipped threshold of a task and how it was chosen."""

    model_config = ConfigDict(extra="allow", frozen=True)

    value: float
    strategy: str


class TaskMetrics(BaseModel):
    """One task's figures; ``threshold`` is typed, the rest kept as written."""

    model_config = ConfigDict(extra="allow", frozen=True)

    task: str
    threshold: TaskThreshold


class MetricsFile(BaseModel):
    """A calibrate run's ``metrics.json`` (see the module docstring for the versions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = METRICS_VERSION
    meta: RunMeta
    tasks: dict[str, TaskMetrics]

    def threshold(self, task: str, *, where: str = "metrics.json") -> float:
        """The shipped threshold of ``task``; a ``DataError`` naming the tasks the file has otherwise."""
        if task not in self.tasks:
            raise DataError(f"{where} has no task {task!r} (it has {sorted(self.tasks)}); choose one with --task.",
                            path=where)
        value = self.tasks[task].threshold.value
        if math.isnan(value):
            raise DataError(f"{where} has no usable threshold for task {task!r} (it is NaN).", path=where)
        return value

    def to_json(self) -> str:
        """The file's text, written as version 1 always was (no ``version`` key while it is 1)."""
        doc = self.model_dump(mode="python", exclude_unset=True, exclude={"version"} if self.version == 1 else None)
        return json.dumps(doc, indent=2, default=str) + "\n"


def _migrate(doc: dict[str, Any], path: str) -> dict[str, Any]:
    version = int(doc.get("version", 1))
    if version > METRICS_VERSION:
        raise DataError(f"{path} is metrics.json version {version}; this judgelab reads up to version "
                        f"{METRICS_VERSION}. Upgrade judgelab to read it.", path=path)
    while version < METRICS_VERSION:
        doc = MIGRATIONS[version](doc)
        version += 1
    return doc


def read_metrics(path: str | Path) -> MetricsFile:
    """Read (and migrate) a run's ``metrics.json``.

    Raises
    ------
    DataError
        If the file cannot be read, is not JSON, is from a newer judgelab or
        lacks a typed field (naming it).
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"Cannot read {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    except ValueError as exc:
        raise DataError(f"{path} is not JSON ({exc}); rerun 'judgelab calibrate' to rewrite it.", path=str(path)) from exc
    if not isinstance(doc, Mapping):
        raise DataError(f"{path} is not a judgelab metrics.json (expected an object).", path=str(path))
    try:
        return MetricsFile.model_validate(_migrate(dict(doc), str(path)))
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise DataError(f"{path} is not a judgelab metrics.json (field {field!r}: {err.get('msg')}); "
                        "rerun 'judgelab calibrate' to rewrite it.", path=str(path), field=field) from exc


def write_metrics(doc: MetricsFile | Mapping[str, Any], path: str | Path) -> Path:
    """Write ``doc`` (a ``MetricsFile``, or the mapping to validate into one) to ``path``."""
    model = doc if isinstance(doc, MetricsFile) else MetricsFile.model_validate(dict(doc))
    path = Path(path)
    path.write_text(model.to_json(), encoding="utf-8")
    return path
