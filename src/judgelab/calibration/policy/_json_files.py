"""Saving and reading the policy sub-package's JSON files (``policy.json``, ``cascade.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from judgelab.errors import DataError

__all__ = ["load_json_model", "save_json_model"]

M = TypeVar("M", bound=BaseModel)


def save_json_model(model: BaseModel, path: str | Path) -> Path:
    """Write ``model`` as indented JSON at ``path`` (creating its folder); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def load_json_model(cls: type[M], path: str | Path, *, kind: str, hint: str) -> M:
    """Read a ``cls`` from ``path``; a one-line ``DataError`` naming the file, the field and ``hint`` otherwise."""
    path = Path(path)
    try:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"Cannot read {kind} file {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err.get("loc", ())) or None
        raise DataError(f"{path} is not a judgelab {kind} (field {field!r}: {err.get('msg')}). {hint}",
                        path=str(path), field=field) from exc
