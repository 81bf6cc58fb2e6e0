"""Reading the text files users hand to judgelab (sets, specs, documents), with errors that say what to do."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from judgelab.errors import DataError, JudgelabError, SpecError

__all__ = ["load_json_model", "not_utf8", "read_text", "save_json_model"]

M = TypeVar("M", bound=BaseModel)


def not_utf8(path: str | Path, exc: UnicodeDecodeError, what: str, *, error: type[DataError | SpecError] = DataError) -> JudgelabError:
    """The error for a file that is not UTF-8 text, naming the line of the first bad byte."""
    try:
        line: int | None = Path(path).read_bytes()[: exc.start].count(b"\n") + 1
    except OSError:
        line = None
    where = f"{path}:{line}" if line else str(path)
    message = (f"The {what} {where} is not UTF-8 text (byte {exc.start}: {exc.reason}). "
               "Convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8) and retry.")
    return DataError(message, path=str(path), line=line) if error is DataError else error(message, path=str(path))


def read_text(path: str | Path, what: str, *, fix: str = "Check the path.", error: type[DataError | SpecError] = DataError) -> str:
    """The UTF-8 text of ``path``; ``error`` (a ``DataError`` or ``SpecError``) when it is unreadable or not UTF-8.

    ``what`` names the file in the message ("labelled set", "--document file"),
    ``fix`` says what to do when it cannot be read.
    """
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"Cannot read {what} {str(path)!r}: {exc.strerror or exc}. {fix}", path=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc, what, error=error) from exc


def save_json_model(model: BaseModel, path: str | Path) -> Path:
    """Write ``model`` as indented JSON at ``path`` (creating its folder); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def load_json_model(cls: type[M], path: str | Path, *, kind: str, hint: str) -> M:
    """Read a ``cls`` from ``path`` (``policy.json``, ``cascade.json``); a one-line ``DataError`` naming the file,
    the field and ``hint`` otherwise."""
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
