"""Scoring one batch of rows into record dicts (what every executor calls)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from judgelab.calibration.data import LabelledRow, ScoreRecord, content_hashes, row_hash
from judgelab.errors import JudgelabError, RemoteError
from judgelab.evaluators import EvaluationResponse, Evaluator, EvaluatorIdentity, evaluate_many, judgment_detail

__all__ = ["is_unreachable", "score_batch"]

logger = logging.getLogger(__name__)


def _jsonable(value: object) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if isinstance(value, Mapping):
            return {str(k): _jsonable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [_jsonable(v) for v in value]
        if hasattr(value, "tolist"):
            return value.tolist()
        return repr(value)


def _template_hash(evaluator: Evaluator) -> str | None:
    """The evaluator's threshold-independent question hash (``YesNoEvaluator.template_hash``), if it has one."""
    value = getattr(evaluator, "template_hash", None)
    return value if isinstance(value, str) else None


def _record(
    row: LabelledRow,
    resp: EvaluationResponse | None,
    seconds: float,
    evaluator: Evaluator,
    error: str | None = None,
    identity: EvaluatorIdentity | None = None,
) -> dict[str, object]:
    detail = judgment_detail(resp) if resp is not None else None
    rec = ScoreRecord(
        id=row.id,
        task=row.task,
        label=row.label,
        group=row.group,
        generator=row.generator,
        split=row.split,
        unit=row.unit,
        probabilities=_jsonable(dict(detail.probabilities)) if detail and detail.probabilities else None,
        score=float(resp.score) if resp is not None else None,
        raw_score=detail.raw_score if detail else None,
        passed=bool(resp.passed) if resp is not None else None,
        chunks=_jsonable(list(detail.chunks)) if detail and detail.chunks else None,
        criteria=dict(detail.criteria) if detail and detail.criteria else None,
        labels=dict(row.labels) if row.labels else None,
        seconds=round(seconds, 6),
        model=detail.model if detail else None,
        spec_hash=(detail.spec_hash if detail else None) or (identity.spec_hash if identity is not None else None),
        template_hash=_template_hash(evaluator),
        prompt_tokens=detail.prompt_tokens if detail else None,
        threshold=detail.threshold if detail else None,
        evaluator=type(evaluator).__name__,
        label_mass=resp.metadata.get("label_mass") if resp is not None else None,
        error=error,
        row_hash=row_hash(row),
        content_hashes=content_hashes(row),
        evaluator_hash=identity.evaluator_hash if identity is not None else None,
        response_chars=len(row.response),
    )
    return rec.model_dump(exclude_none=True, by_alias=True)  # the file keeps the key fold_group


def is_unreachable(exc: BaseException) -> bool:
    """Whether a row failed because the judge's server could not be reached (after the client's retries)."""
    return isinstance(exc, RemoteError) and exc.reason == "unreachable"


def score_batch(
    evaluator: Evaluator, batch: Sequence[LabelledRow], identity: EvaluatorIdentity | None = None,
    errors: dict[str, BaseException] | None = None,
) -> list[dict[str, object]]:
    """One record dict per row of ``batch``; a row that raises gets an error record (its exception in ``errors``)."""
    t0 = time.perf_counter()
    try:
        responses = evaluate_many(evaluator, [r.to_request() for r in batch])
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as exc:  # isolate the failing row(s)
        if len(batch) == 1:
            # a server that cannot be reached fails every row alike: the run's one closing line says so
            log = logger.info if is_unreachable(exc) else logger.warning
            log("row %s failed: %s", batch[0].id, exc)
            if errors is not None:
                errors[batch[0].id] = exc
            return [_record(batch[0], None, time.perf_counter() - t0, evaluator, f"{type(exc).__name__}: {exc}", identity)]
        out = []
        for row in batch:
            out.extend(score_batch(evaluator, [row], identity, errors))
        return out
    if len(responses) != len(batch):
        raise JudgelabError(
            f"{type(evaluator).__name__}.evaluate_many returned {len(responses)} responses for {len(batch)} requests."
        )
    per_row = (time.perf_counter() - t0) / len(batch)
    return [_record(row, resp, per_row, evaluator, identity=identity) for row, resp in zip(batch, responses)]
