"""Frozen option objects, so that no public call takes more than a few parameters.

``calibrate``, ``analyze_run`` and ``stress`` take their options as one
object alone (``calibrate(..., options=CalibrationOptions(seed=1))``), as
httpx takes a ``Timeout``: a field name that is not a parameter is Python's
own ``TypeError``, and ``options_or_default`` checks the object's type once.
The policy fitters and the gate take theirs the same way
(``fit_policy(records, LTTSettings(alpha=0.05))``,
``gate(base, new, floors=GateFloors(min_rows=50), resampling=Resampling(seed=1))``).
"""

from __future__ import annotations

from typing import TypeVar

from judgelab.errors import check_parameter

__all__ = ["options_or_default"]

T = TypeVar("T")


def options_or_default(cls: type[T], options: T | None, where: str, *, name: str = "options",
                       example: str = "limit=24") -> T:
    """``options``, or ``cls()`` when it is None.

    Parameters
    ----------
    cls
        The options class (a frozen dataclass whose fields all have defaults).
    options
        What the caller passed.
    where
        The public call, for the message (``"calibrate"``).
    name, example
        The parameter's name and a field assignment for the message's
        example (``options=CalibrationOptions(limit=24)``).

    Raises
    ------
    ParameterError
        When ``options`` is neither None nor a ``cls`` (a dict of fields, say),
        naming the call and the class to build.
    """
    if options is None:
        return cls()
    check_parameter(isinstance(options, cls), name, where, f"None or a {cls.__name__} "
                    f"({name}={cls.__name__}({example}), say)", options)
    return options
