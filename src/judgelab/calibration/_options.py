"""Frozen option objects, so that no public call takes more than a few parameters.

``calibrate``, ``analyze_run`` and ``stress`` take their options as one
object alone (``calibrate(..., options=CalibrationOptions(seed=1))``), as
httpx takes a ``Timeout``: a field name that is not a parameter is Python's
own ``TypeError``, and ``options_or_default`` checks the object's type once.
``with_overrides`` serves the policy fitters, which still take an options
object plus keyword overrides of its fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from judgelab.errors import check_parameter

__all__ = ["options_or_default", "with_overrides"]

T = TypeVar("T")


def options_or_default(cls: type[T], options: T | None, where: str) -> T:
    """``options``, or ``cls()`` when it is None.

    Raises
    ------
    ParameterError
        When ``options`` is neither None nor a ``cls`` (a dict of fields, say),
        naming the call and the class to build.
    """
    if options is None:
        return cls()
    check_parameter(isinstance(options, cls), "options", where, f"None or a {cls.__name__} "
                    f"(options={cls.__name__}(limit=24), say)", options)
    return options


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
