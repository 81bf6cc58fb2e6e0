"""Label corrections: a ``corrections.jsonl`` beside a labelled set, never an edit of the set itself.

A person who finds a wrong label (in ``judgelab view``, or by hand) appends one
``Correction`` line: which row, its label before and after, a note, who and
when. ``apply_corrections`` reads the set's rows through them (the last
correction of a row wins) and says what it did (``AppliedCorrections``: the
rows relabelled, the corrections that named no row of the set, those whose
``old_label`` no longer matches, and the file's sha256), so that a run can
record which corrections it measured against.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgelab.calibration.data._records import ScoreRecord
from judgelab.calibration.data._rows import LabelledRow
from judgelab.errors import DataError
from judgelab.textfiles import read_text

__all__ = ["CORRECTIONS_FILE", "AppliedCorrections", "Correction", "append_correction", "apply_corrections",
           "corrections_beside", "read_corrections"]

R = TypeVar("R", LabelledRow, ScoreRecord)

#: The file name of a set's corrections, beside the set.
CORRECTIONS_FILE = "corrections.jsonl"


class Correction(BaseModel):
    """One label correction: a line of ``corrections.jsonl``.

    Attributes
    ----------
    id
        The row's id in the set.
    old_label, new_label
        The row's label as the set has it, and the label it should have.
    note
        Why (free text).
    who, when
        Who made the correction and when (ISO 8601, UTC).
    task
        The row's task, when known (a check, not a key: ids are unique in a set).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    old_label: Literal[0, 1]
    new_label: Literal[0, 1]
    note: str = ""
    who: str = ""
    when: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    task: str | None = None


@dataclass(frozen=True)
class AppliedCorrections:
    """What applying a corrections file to a set did.

    Attributes
    ----------
    path
        The corrections file.
    sha256
        The sha256 of its bytes (the run's provenance).
    corrected
        Ids whose label the corrections changed, in set order.
    unmatched
        Ids of corrections that name no row of the set (left alone).
    stale
        Ids whose row's label is neither the correction's ``old_label`` nor its ``new_label``
        (the set changed since the correction was made; left alone).
    """

    path: str
    sha256: str
    corrected: tuple[str, ...] = ()
    unmatched: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()

    def describe(self) -> str:
        """``"3 labels corrected by FILE (sha256 abc...)"``, with the unmatched and stale ones named."""
        text = f"{len(self.corrected)} label(s) corrected by {self.path} (sha256 {self.sha256[:12]})"
        if self.unmatched:
            text += f"; {len(self.unmatched)} correction(s) name no row of the set ({', '.join(self.unmatched[:5])})"
        if self.stale:
            text += (f"; {len(self.stale)} correction(s) left alone because the row's label is no longer their "
                     f"old label ({', '.join(self.stale[:5])})")
        return text


def corrections_beside(set_path: str | Path) -> Path:
    """The ``corrections.jsonl`` beside a set: in its folder (a set file) or inside it (a set folder).

    ``KIND:PATH`` set names are read as their ``PATH``.
    """
    text = str(set_path)
    kind, sep, rest = text.partition(":")
    while sep and len(kind) > 1 and not Path(text).exists():  # KIND:PATH, d2c:KIND:PATH
        text = rest
        kind, sep, rest = text.partition(":")
    path = Path(text)
    return path / CORRECTIONS_FILE if path.is_dir() else path.parent / CORRECTIONS_FILE


def read_corrections(path: str | Path) -> list[Correction]:
    """Read a ``corrections.jsonl`` (one ``Correction`` per line; blank lines ignored).

    Raises
    ------
    DataError
        If the file cannot be read, or a line is malformed (naming the file, the line and the field).
    """
    text = read_text(path, "corrections file", fix="Pass the corrections.jsonl that 'judgelab view' wrote.")
    out: list[Correction] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(Correction.model_validate_json(line))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err.get("loc", ())) or None
            raise DataError(f"Malformed correction at {path}:{lineno}" + (f" field {field!r}" if field else "")
                            + f": {err.get('msg')}. Fix or delete the line.", path=str(path), line=lineno,
                            field=field) from exc
    return out


def append_correction(path: str | Path, correction: Correction) -> Path:
    """Append one correction to ``path`` (created with its folder when missing); returns the path."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(correction.model_dump(exclude_none=True), ensure_ascii=False) + "\n")
    except OSError as exc:
        raise DataError(f"Cannot write the corrections file {str(path)!r}: {exc.strerror or exc}. Choose a writable "
                        "file with --corrections.", path=str(path)) from exc
    return path


def _latest(corrections: Iterable[Correction]) -> dict[str, Correction]:
    latest: dict[str, Correction] = {}
    for c in corrections:
        latest[c.id] = c  # the last correction of a row wins
    return latest


def apply_corrections(rows: Sequence[R], path: str | Path) -> tuple[list[R], AppliedCorrections]:
    """The rows (or a scored run's records) with the corrections of ``path`` applied, and what was applied.

    A correction applies when its row's label is its ``old_label``; a row already at
    ``new_label`` is left as it is (not counted); any other row is counted as stale.
    ``rows`` may be ``LabelledRow``s (a set, before scoring) or ``ScoreRecord``s (a
    scored run, relabelled without rescoring: the judge never reads the label).

    Raises
    ------
    DataError
        If the file cannot be read or a line is malformed.
    """
    path = Path(path)
    latest = _latest(read_corrections(path))
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:  # read_corrections read it a moment ago
        raise DataError(f"Cannot read corrections file {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    ids = {r.id for r in rows}
    corrected: list[str] = []
    stale: list[str] = []
    out: list[R] = []
    for row in rows:
        c = latest.get(row.id)
        if c is not None and c.new_label != row.label:
            if c.old_label == row.label and (c.task is None or c.task == row.task):
                row = row.model_copy(update={"label": c.new_label})
                corrected.append(row.id)
            else:
                stale.append(row.id)
        out.append(row)
    unmatched = tuple(i for i in latest if i not in ids)
    return out, AppliedCorrections(str(path), digest, tuple(corrected), unmatched, tuple(stale))
