"""``JudgmentDetail``: the typed record of what an evaluator measured for one response.

Every judgelab evaluator attaches one to its ``EvaluationResponse``
(``response.detail``); calibration, and anything else that re-reads scores,
reads these fields instead of string keys in ``metadata``. ``metadata``
keeps the same facts under their old keys for the server and for users.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JudgmentDetail", "judgment_detail"]


@dataclass(frozen=True)
class JudgmentDetail:
    """What one evaluation measured.

    Attributes
    ----------
    evaluator
        The evaluator's name (``"fact-checking"``, ``"relevancy"``, ``"rubric"``, ``"criteria"``).
    raw_score
        The evaluator's P(pass) before its calibrator (equal to the response's
        ``score`` when uncalibrated). For a rubric, the expected level scaled to
        [0, 1]; for a cascade, the deciding stage's score.
    probabilities
        The label probabilities read (of the best chunk), keyed by the label
        words exactly as the model spec and the engine write them (``"Yes"``,
        ``"No"``, ``"1"``..``"5"``); no case change. Records written before
        judgelab kept the case have lowercase keys (``"yes"``, ``"no"``).
    chunks
        The raw score of every evidence chunk, in order (one entry when the evidence fitted).
    criteria
        ``{criterion: score}`` for evaluators that check several criteria.
    model, spec_hash
        The judge model's id and spec hash.
    threshold
        The threshold ``passed`` was decided at (on ``score``'s scale).
    prompt_tokens
        Prompt tokens over all chunks.
    calibrated
        Whether ``score`` went through a calibrator.
    """

    evaluator: str
    raw_score: float
    probabilities: Mapping[str, float] = field(default_factory=dict)
    chunks: tuple[float, ...] = ()
    criteria: Mapping[str, float] = field(default_factory=dict)
    model: str | None = None
    spec_hash: str | None = None
    threshold: float | None = None
    prompt_tokens: int | None = None
    calibrated: bool = False


def _criteria_from_metadata(crit: object) -> dict[str, float]:
    if not isinstance(crit, Mapping):
        return {}
    out = {}
    for name, value in crit.items():
        if isinstance(value, Mapping):
            value = value.get("score", value.get("probability"))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[str(name)] = float(value)
    return out


def judgment_detail(response: Any) -> JudgmentDetail:
    """The response's ``detail``; for an evaluator that does not attach one, read from its ``metadata``.

    The fallback reads the conventional keys (``raw_score``, ``probabilities``,
    ``chunks``, ``criteria``, ``model``, ``spec_hash``, ``threshold``,
    ``prompt_tokens``), so third-party evaluators that fill ``metadata`` the
    way judgelab's did keep working.
    """
    detail = getattr(response, "detail", None)
    if isinstance(detail, JudgmentDetail):
        return detail
    meta = dict(getattr(response, "metadata", None) or {})
    probabilities = meta.get("probabilities")
    chunks = meta.get("chunks")
    return JudgmentDetail(
        evaluator=str(meta.get("evaluator") or type(response).__name__),
        raw_score=meta.get("raw_score", response.score),
        probabilities=probabilities if isinstance(probabilities, Mapping) else {},
        chunks=tuple(chunks) if isinstance(chunks, (list, tuple)) else (),
        criteria=_criteria_from_metadata(meta.get("criteria")),
        model=meta.get("model"),
        spec_hash=meta.get("spec_hash"),
        threshold=meta.get("threshold"),
        prompt_tokens=meta.get("prompt_tokens"),
        calibrated=bool(meta.get("calibrated", False)),
    )
