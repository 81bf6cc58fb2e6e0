"""Keyword parameters declared once, as a ``TypedDict``, and checked at run time as mypy checks them.

A template evaluator declares its keyword parameters in one ``TypedDict`` (``YesNoParameters``,
``FactCheckingParameters``) that its constructor and its ``config_for`` take as
``**parameters: Unpack[...]``; mypy then refuses a misspelled or mistyped keyword, and
``check_keywords`` refuses the same at run time (a name built from a string: the registry, the CLI),
naming the parameters that exist.
"""

from __future__ import annotations

import difflib
import numbers
import types
import typing
from collections.abc import Mapping
from functools import cache

from judgelab.errors import ParameterError, ParameterTypeError

__all__ = ["check_keywords", "declared_keywords"]


@cache
def declared_keywords(declaration: type) -> Mapping[str, object]:
    """The parameters a keyword ``TypedDict`` declares: name -> type hint, in declaration order."""
    return types.MappingProxyType(typing.get_type_hints(declaration))


def _fits(value: object, hint: object) -> bool:
    """Whether ``value`` is of ``hint``, as far as a run-time check can tell (a protocol is taken on trust)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if origin is tuple:  # a list of the same words is accepted, as the config stores tuple(labels)
        args = typing.get_args(hint)
        return isinstance(value, (tuple, list)) and (not args or args[-1] is Ellipsis or len(value) == len(args)) and all(
            _fits(v, args[0] if args[-1] is Ellipsis else a) for v, a in zip(value, args))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if isinstance(hint, type) and not getattr(hint, "_is_protocol", False):
        return isinstance(value, hint)
    return True


def _describe(hint: object) -> str:
    if typing.get_origin(hint) is None and isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("NoneType", "None")


def check_keywords(where: str, given: Mapping[str, object], declaration: type) -> None:
    """Refuse a keyword ``declaration`` does not declare, or a value not of its declared type.

    Raises
    ------
    ParameterError
        For an unknown name: the message names the closest declared one and lists them all.
    ParameterTypeError
        For a value of another type: the message names the parameter, the type and the value.
    """
    declared = declared_keywords(declaration)
    unknown = [name for name in given if name not in declared]
    if unknown:
        near = difflib.get_close_matches(unknown[0], declared, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ParameterError(
            f"{where} takes no parameter {', '.join(map(repr, unknown))}{hint}; its parameters are "
            f"{', '.join(declared)}. Fix the name.", name=unknown[0])
    for name, value in given.items():
        if not _fits(value, declared[name]):
            raise ParameterTypeError(f"The {name!r} parameter of {where} must be {_describe(declared[name])}. "
                                     f"Got {value!r} ({type(value).__name__}) instead.")
