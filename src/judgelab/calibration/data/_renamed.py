"""Renamed names: an old keyword or attribute still works for one release, with a ``DeprecationWarning``.

The resampling unit (rows that stay together in folds and bootstrap resamples) was called
``groups``, ``clusters``, ``fold_group`` and ``fold_key``; it is ``units`` / ``unit`` now.
"""

from __future__ import annotations

import warnings
from typing import TypeVar

from judgelab.errors import ParameterError

__all__ = ["renamed_keyword", "warn_renamed"]

T = TypeVar("T")


def warn_renamed(old: str, new: str, where: str, *, stacklevel: int = 3) -> None:
    """Warn (``DeprecationWarning``) that ``where``'s ``old`` is now called ``new``."""
    warnings.warn(f"{where}: {old!r} is deprecated and will be removed in the next release; use {new!r} "
                  "(the same value).", DeprecationWarning, stacklevel=stacklevel)


def renamed_keyword(new_value: T | None, old_value: T | None, *, old: str, new: str, where: str) -> T | None:
    """The value of keyword ``new``, or of its old name ``old`` (which warns) when only that was given.

    Raises
    ------
    ParameterError
        When both keywords were given.
    """
    if old_value is None:
        return new_value
    if new_value is not None:
        raise ParameterError(f"{where} takes {new}= or its deprecated name {old}=, not both. Pass {new}= only.",
                             name=old)
    warn_renamed(old, new, where, stacklevel=4)
    return old_value
