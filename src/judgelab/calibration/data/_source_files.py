"""Reading the authors' files of public data sets: JSON lines, required fields, files under a folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from judgelab.errors import DataError
from judgelab.textfiles import read_text

__all__ = ["json_lines", "field", "source_files"]


def json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line, object)`` from a JSONL file (or a JSON array file)."""
    text = read_text(path, "data set file")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path} is not valid JSON: {exc.msg}", path=str(path), line=exc.lineno) from exc
        yield from enumerate(items, start=1)
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{path}:{lineno} is not valid JSON ({exc.msg}).", path=str(path), line=lineno
            ) from exc
        yield lineno, obj


def field(obj: dict[str, Any], name: str, path: Path, line: int) -> Any:
    if name not in obj:
        raise DataError(
            f"{path}:{line} has no field {name!r}; is this the right file for this importer?",
            path=str(path),
            line=line,
            field=name,
        )
    return obj[name]


def source_files(path: str | Path, pattern: str, *, recursive: bool = False) -> list[Path]:
    """``path`` itself when it is a file, else the files matching ``pattern`` under it, in name order."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise DataError(f"{str(path)!r} does not exist; pass the data set's file or folder.", path=str(path))
    files = sorted(path.rglob(pattern) if recursive else path.glob(pattern))
    if not files:
        raise DataError(f"No {pattern} files in {str(path)!r}.", path=str(path))
    return files
