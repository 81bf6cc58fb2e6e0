"""A small TOML writer for model specs (strings, numbers, booleans, lists, tables, arrays of tables)."""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["dump_toml"]


def _value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    return k if k.replace("-", "").replace("_", "").isalnum() else json.dumps(k)


def _is_table(v: object) -> bool:
    """A nested mapping is written as a sub-table when it holds mappings or long text."""
    return isinstance(v, Mapping) and any(
        isinstance(x, Mapping) or (isinstance(x, str) and len(x) > 40) for x in v.values())


def _omitted(v: object) -> bool:
    """``None`` and an empty mapping are left out: every spec field they could fill defaults to them."""
    return v is None or (isinstance(v, Mapping) and not v)


def dump_toml(data: Mapping[str, object], *, header: str = "") -> str:
    """``data`` as TOML: scalars first, then ``[table]``s and ``[[array of tables]]``."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    tables, arrays = {}, {}
    for k, v in data.items():
        if _omitted(v):
            continue
        if isinstance(v, Mapping):
            tables[k] = v
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            arrays[k] = v
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, items in arrays.items():
        for item in items:
            lines += ["", f"[[{_key(k)}]]"]
            lines += [f"{_key(a)} = {_value(b)}" for a, b in item.items() if b is not None]
    for k, table in tables.items():
        _table(lines, _key(k), table)
    return "\n".join(lines) + "\n"


def _table(lines: list[str], name: str, table: Mapping[str, object]) -> None:
    nested = {k: v for k, v in table.items() if isinstance(v, Mapping) and _is_table(v)}
    lines += ["", f"[{name}]"]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in table.items() if not _omitted(v) and k not in nested]
    for k, v in nested.items():
        _table(lines, f"{name}.{_key(k)}", v)
