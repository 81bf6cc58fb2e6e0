"""Typed run files: ``metrics.json`` as a versioned pydantic model, read with migration of older versions.

In the way Inspect AI's ``EvalLog`` is a model of its log file, ``MetricsFile``
is the model of a calibrate run's ``metrics.json``: ``version``, ``meta`` (the
run facts, ``RunMeta``) and ``tasks`` (per task a ``TaskMetrics``: the
shipped threshold, held-out metrics, calibration, agreement, the policy...).
Every key is a typed field (``RunMeta`` also keeps run facts a caller of
``write_report`` adds); elsewhere a key the model does not know is an error.

Versions
--------
1
    What judgelab wrote before the version was written (no ``version``
    key; a file without one is version 1).
2
    The same fields, with ``version`` always written (first).

A model whose shape changed migrates the older shape itself, in a
``model_validator(mode="before")`` (``MetricsFile._from_version_1``), so
``read_metrics`` reads every version (a file without ``version`` as version
1); a file from a newer judgelab is refused with a message saying so.

The score records (``ScoreRecord``, one line of ``scores.jsonl``) and the
policy (``Policy``, ``policy.json``, with its own ``version``) are typed the
same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from judgelab.calibration.data._task_metrics import TaskMetrics
from judgelab.errors import DataError

__all__ = ["METRICS_VERSION", "MetricsFile", "RunMeta", "read_metrics", "write_metrics"]

#: The ``metrics.json`` format this judgelab writes.
METRICS_VERSION = 2


class RunMeta(BaseModel):
    """The run facts at the top of the report: model, set, rows, options, spec hash.

    The facts ``judgelab calibrate`` writes are typed; a caller of
    ``write_report`` may add facts of its own (kept as given, shown in the
    report).
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    model: str | None = None
    set: str | None = None
    rows: int | None = None
    skipped_invalid_rows: int | None = None
    threshold_strategy: str | None = None
    calibrator: str | None = None
    self_generators: str | None = None
    seed: int | None = None
    rescored_changed_rows: int | None = None
    spec_hash: str | None = None
    # label corrections applied to the set (``calibrate --corrections``): how many, from which file
    labels_corrected: int | None = None
    corrections: str | None = None
    corrections_sha256: str | None = None


class MetricsFile(BaseModel):
    """A calibrate run's ``metrics.json`` (see the module docstring for the versions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = METRICS_VERSION
    meta: RunMeta
    tasks: dict[str, TaskMetrics]

    @model_validator(mode="before")
    @classmethod
    def _from_version_1(cls, data: object) -> object:
        """Version 1 -> 2: the same fields, with the version written (``read_metrics`` reads no key as 1)."""
        if isinstance(data, Mapping) and data.get("version") == 1:
            return {**data, "version": 2}
        return data

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
        """The file's text: ``version`` first (always written), then the fields that were set.

        A figure that is undefined (``None``, nan when computed) is written as
        ``null``; floats are written as Python's ``json`` writes them.
        """
        doc = {"version": self.version, **self.model_dump(mode="python", exclude_unset=True, exclude={"version"})}
        return json.dumps(doc, indent=2, default=str) + "\n"


def _refuse_newer(doc: Mapping[str, object], path: str) -> None:
    version = doc.get("version", 1)
    if isinstance(version, str) and version.strip().isdigit():
        version = int(version)
    if isinstance(version, int) and version > METRICS_VERSION:
        raise DataError(f"{path} is metrics.json version {version}; this judgelab reads up to version "
                        f"{METRICS_VERSION}. Upgrade judgelab to read it.", path=path)


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
    _refuse_newer(doc, str(path))
    try:
        return MetricsFile.model_validate({"version": 1, **doc})  # a file without a version is version 1
    except ValidationError as exc:
        field, msg = _first_error(exc)
        raise DataError(f"{path} is not a judgelab metrics.json (field {field!r}: {msg}); "
                        "rerun 'judgelab calibrate' to rewrite it.", path=str(path), field=field) from exc


def _first_error(exc: ValidationError) -> tuple[str | None, str]:
    """The dotted field path and message of a validation error's first complaint."""
    err = exc.errors()[0]
    return ".".join(str(p) for p in err.get("loc", ())) or None, str(err.get("msg"))


def write_metrics(doc: MetricsFile | Mapping[str, object], path: str | Path) -> Path:
    """Write ``doc`` (a ``MetricsFile``, or the mapping to validate into one) to ``path``.

    Raises
    ------
    DataError
        If ``doc`` does not fit the model (e.g. run facts of the wrong type),
        naming the field.
    """
    path = Path(path)
    try:
        model = doc if isinstance(doc, MetricsFile) else MetricsFile.model_validate(dict(doc))
    except ValidationError as exc:
        field, msg = _first_error(exc)
        raise DataError(f"Cannot write {path}: field {field!r} of metrics.json: {msg}. Pass run facts and "
                        "task figures of the types MetricsFile declares.", path=str(path), field=field) from exc
    path.write_text(model.to_json(), encoding="utf-8")
    return path
