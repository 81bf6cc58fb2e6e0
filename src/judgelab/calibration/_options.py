"""Frozen option objects with keyword overrides, so that no public call takes more than a few parameters.

``calibrate(..., options=CalibrationOptions(seed=1))`` and
``calibrate(..., seed=1)`` mean the same: keyword overrides are the fields of
the options class, checked by name like ordinary keyword arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["with_overrides"]

T = TypeVar("T")


def with_overrides(cls: type[T], options: T | None, overrides: Mapping[str, Any], where: str) -> T:
    """``options`` (or ``cls()``) with the fields named in ``overrides`` replaced.

    Raises ``TypeError`` for a name that is not a field, as Python does for an
    unknown keyword argument of ``where``.
    """
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    base = options if options is not None else cls()
    return dataclasses.replace(base, **overrides) if overrides else base  # type: ignore[type-var]
