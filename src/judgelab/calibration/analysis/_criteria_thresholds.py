"""Per-criterion thresholds for criteria judges."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from judgelab.calibration.analysis._thresholds import choose_threshold, parse_strategy
from judgelab.calibration.data import ScoreRecord

__all__ = ["criteria_thresholds", "write_criteria_thresholds"]


def criteria_thresholds(
    records: Sequence[ScoreRecord],
    *,
    strategy: str = "balanced_accuracy",
) -> dict[str, dict[str, float | None]]:
    """Choose each criterion's ``minimum`` from rows with per-criterion labels.

    Uses records whose ``labels`` (from the row) and ``criteria`` (scores
    from the criteria evaluator's metadata) both name the criterion.

    Returns
    -------
    dict
        ``{criterion: {"minimum": t, "n": rows, "n_pos": positives,
        "balanced_accuracy": on the tuning rows}}``; the balanced accuracy is
        measured on the rows the minimum was tuned on (in-sample).
    """
    from judgelab.calibration.analysis._metrics import fast_binary_metrics

    st = parse_strategy(strategy)
    ys: dict[str, list[int]] = {}
    ss: dict[str, list[float]] = {}
    for r in records:
        if not (r.labels and r.criteria):
            continue
        for name, lab in r.labels.items():
            if name in r.criteria and r.criteria[name] is not None:
                ys.setdefault(name, []).append(int(lab))
                ss.setdefault(name, []).append(float(r.criteria[name]))
    out: dict[str, dict[str, float | None]] = {}
    for name in sorted(ys):
        y, s = np.array(ys[name]), np.array(ss[name])
        t = choose_threshold(y, s, st)
        ba = fast_binary_metrics(y, s, t)["balanced_accuracy"]
        out[name] = {
            "minimum": t,
            "n": int(y.size),
            "n_pos": int(y.sum()),
            "balanced_accuracy_in_sample": None if math.isnan(ba) else ba,
        }
    return out


def write_criteria_thresholds(
    thresholds: Mapping[str, Mapping[str, object]], path: str | Path, *, model: str | None = None, strategy: str = ""
) -> Path:
    """Write tuned criterion minimums as JSON for ``CriteriaJudge`` to load.

    The file is ``{"format": "judgelab-criteria-thresholds", "version": 1,
    "model": ..., "strategy": ..., "criteria": {name: {"minimum": t, ...}}}``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": "judgelab-criteria-thresholds",
        "version": 1,
        "model": model,
        "strategy": str(strategy),
        "criteria": {k: dict(v) for k, v in thresholds.items()},
    }
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path
