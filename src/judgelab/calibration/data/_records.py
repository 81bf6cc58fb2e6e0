"""Score records: one scored row of ``scores.jsonl``, its row hash, and reading a run file."""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judgelab.calibration.data._renamed import warn_renamed
from judgelab.calibration.data._rows import LabelledRow
from judgelab.errors import DataError

__all__ = ["ScoreRecord", "judge_values", "read_scores", "row_hash"]

logger = logging.getLogger(__name__)


class ScoreRecord(BaseModel):
    """One scored row, as written to ``scores.jsonl``.

    ``score`` is ``None`` (and ``error`` says why) when the evaluator raised
    for this row; such rows are left out of the analysis and counted, never
    silently scored as a failure.

    ``unit`` is the row's resampling unit, ``LabelledRow.unit``
    (``meta["pair"]`` or the id): cross-validation keeps records of one unit
    in one fold and bootstraps draw them together. The file stores it under
    the key ``fold_group`` (``model_dump(by_alias=True)`` writes that key;
    both names are read). Records written before the key existed lack it;
    their unit is then their id.

    ``row_hash`` (``row_hash(row)``), ``spec_hash`` and ``evaluator_hash``
    say what was scored and by which judge: a resumed run reuses a record
    only when all three still match (see ``plan_resume``). ``content_hashes``
    hash each part of the row (documents, user text, response, other
    fields) so that ``judgelab gate`` can say what changed in a row.

    ``probabilities`` are the label probabilities the judge read, keyed by
    the label words as the model spec writes them (``"Yes"``, ``"No"``);
    records written before judgelab kept the case have lowercase keys
    (``"yes"``, ``"no"``) and load the same (nothing reads a key by name).
    ``raw_score`` is the evaluator's P(pass) before its calibrator and
    ``score`` the value after it, which the analysis reads (the evaluators
    ``calibrate`` builds have no calibrator, so there the two are equal).

    ``response_chars`` is the length of the judged text (the row's
    ``response``) in characters, for the length-bias check; records written
    before the field existed lack it.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    id: str
    task: str
    label: int
    group: str | None = None
    generator: str | None = None
    split: str | None = None
    unit: str = Field(default="", alias="fold_group")
    probabilities: dict[str, float] | None = None
    score: float | None = None
    raw_score: float | None = None
    passed: bool | None = None
    chunks: list[object] | None = None
    criteria: dict[str, float] | None = None
    labels: dict[str, int] | None = None
    seconds: float | None = None
    model: str | None = None
    spec_hash: str | None = None
    template_hash: str | None = None
    prompt_tokens: int | None = None
    threshold: float | None = None
    evaluator: str | None = None
    label_mass: float | None = None
    error: str | None = None
    row_hash: str | None = None
    content_hashes: dict[str, str] | None = None
    evaluator_hash: str | None = None
    response_chars: int | None = None

    @property
    def ok(self) -> bool:
        return self.score is not None and not math.isnan(self.score)

    @model_validator(mode="before")
    @classmethod
    def _own_unit_by_default(cls, data: object) -> object:
        # records from before the ``fold_group`` key existed (or without a unit): the row is its own unit
        if isinstance(data, dict) and not (data.get("fold_group") or data.get("unit")) and data.get("id"):
            return {**data, "fold_group": data["id"]}
        return data

    @property
    def fold_key(self) -> str:
        """Deprecated name of ``unit`` (removed in the next release)."""
        warn_renamed("fold_key", "unit", "ScoreRecord")
        return self.unit

    @property
    def fold_group(self) -> str:
        """Deprecated name of ``unit`` (removed in the next release; ``fold_group`` stays the file's key)."""
        warn_renamed("fold_group", "unit", "ScoreRecord")
        return self.unit


def judge_values(records: Iterable[ScoreRecord], field: str) -> list[str]:
    """The distinct values of a judge identity field (``spec_hash``, ``template_hash``, ``model``,
    ``evaluator``...) over ``records``, sorted; unset ones left out. Also reads fields an older or
    newer judgelab wrote that this ``ScoreRecord`` does not declare."""
    return sorted({str(getattr(r, field, None) or (r.model_extra or {}).get(field) or "") for r in records} - {""})


def row_hash(row: LabelledRow) -> str:
    """A short sha256 of everything a row says except its id and licence (text, documents, label, task, ...).

    A saved record whose ``row_hash`` differs from its row's was scored from
    other content (or judged against another label) and is never reused. The
    licence of a row's text changes nothing the judge reads, so it is left out
    (and rows scored before the field existed keep their hash).
    """
    payload = json.dumps(row.model_dump(mode="json", exclude={"id", "licence"}), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def read_scores(path: str | Path, *, repair: bool = False) -> list[ScoreRecord]:
    """Read a ``scores.jsonl`` file.

    Parameters
    ----------
    path
        The run file.
    repair
        A run killed while writing can leave a partial last line. When true,
        that line is cut off the file (so a resumed run appends cleanly);
        when false it is ignored with a warning. A malformed line anywhere
        else raises ``DataError`` naming it.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"Cannot read run file {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    records: list[ScoreRecord] = []
    lines = data.split(b"\n")
    offset = 0
    for lineno, raw in enumerate(lines, start=1):
        is_last = lineno == len(lines) or (lineno == len(lines) - 1 and lines[-1] == b"")
        if raw.strip():
            try:
                records.append(ScoreRecord.model_validate_json(raw))
            except ValidationError as exc:
                truncated = is_last and not data.endswith(b"\n")
                if truncated:
                    logger.warning("%s:%d is a partial record (a run was interrupted); %s", path, lineno,
                                   "cutting it off" if repair else "ignoring it")
                    if repair:
                        with path.open("r+b") as fh:
                            fh.truncate(offset)
                    break
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err.get("loc", ())) or None
                raise DataError(
                    f"Malformed run record at {path}:{lineno}"
                    + (f" field {field!r}" if field else "")
                    + f": {err.get('msg')}. Delete the line (the row will be rescored) or use a new output file.",
                    path=str(path),
                    line=lineno,
                    field=field,
                ) from exc
        offset += len(raw) + 1
    return records
