"""A drift gate for CI: has the judge, its prompt or its data changed beyond what was measured?

``gate(baseline, new)`` compares two scored runs of one task and fails on the
first of:

1. the judge changed: model spec hash, template hash, evaluator or the
   criteria (question definitions) differ;
2. the label mix shifted: the share of label 1 moved by more than
   ``label_tolerance`` (absolute), so the metric would not be comparable;
3. the metric dropped beyond its uncertainty: a bootstrap interval of
   ``new - baseline`` at the baseline's threshold. Paired (the shared rows
   are resampled together, units of ``meta["pair"]`` as one) when the runs
   share at least half of the new rows; unpaired (each run resampled on its
   own) otherwise. With ``max_drop="auto"`` the gate fails when the whole
   interval lies below 0; with a number ``X``, when it lies below ``-X``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgelab.calibration._options import with_overrides
from judgelab.calibration.analysis._bootstrap import Interval, Resampling, paired_difference, unpaired_difference
from judgelab.calibration.analysis._metrics import fast_binary_metrics
from judgelab.calibration.data._records import ScoreRecord, judge_values
from judgelab.errors import DataError, JudgelabError

__all__ = ["GateResult", "gate"]

GATE_METRICS = ("accuracy", "balanced_accuracy", "f1", "mcc", "auroc", "auprc", "precision", "recall")


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict: ``passed`` and, when it failed, ``reason`` (one line)."""

    passed: bool
    reason: str
    metric: str
    threshold: float
    baseline: float
    new: float
    difference: Interval
    paired: bool
    n_baseline: int
    n_new: int
    n_shared: int
    label_share_baseline: float
    label_share_new: float
    label_tolerance: float
    max_drop: float | None
    checks: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The comparison, for people."""
        test = f"paired on {self.n_shared} shared rows" if self.paired else "unpaired"
        out = [
            f"{self.metric} at threshold {self.threshold:.3f}: baseline {self.baseline:.3f}, new {self.new:.3f} "
            f"({test}; {self.n_baseline} baseline rows, {self.n_new} new); new - baseline {self.difference:+.3f} "
            "(95% bootstrap interval)",
            f"label 1 share: baseline {self.label_share_baseline:.3f}, new {self.label_share_new:.3f} "
            f"(tolerance {self.label_tolerance:g})",
        ]
        out += [f"{k}: {v}" for k, v in self.checks.items()]
        return out

    def to_dict(self) -> dict:
        return {"passed": self.passed, "reason": self.reason, "metric": self.metric, "threshold": self.threshold,
                "baseline": self.baseline, "new": self.new, "difference": self.difference.to_dict(),
                "paired": self.paired, "n_baseline": self.n_baseline, "n_new": self.n_new, "n_shared": self.n_shared,
                "label_share_baseline": self.label_share_baseline, "label_share_new": self.label_share_new,
                "label_tolerance": self.label_tolerance, "max_drop": self.max_drop, "checks": self.checks}


def _criteria(records: Sequence[ScoreRecord]) -> list[str]:
    return sorted({k for r in records for k in (r.criteria or {})})


def _identity_change(base: Sequence[ScoreRecord], new: Sequence[ScoreRecord]) -> tuple[str | None, dict[str, str]]:
    checks = {}
    for name, what in (("spec_hash", "model spec"), ("template_hash", "template"), ("evaluator", "evaluator")):
        a, b = judge_values(base, name), judge_values(new, name)
        checks[what] = "same" if a == b else f"baseline {', '.join(a) or '-'}, new {', '.join(b) or '-'}"
        if a != b:
            return f"the {what} changed (baseline {', '.join(a) or 'none'}, new {', '.join(b) or 'none'})", checks
    a, b = _criteria(base), _criteria(new)
    checks["question definitions"] = "same" if a == b else f"baseline {a}, new {b}"
    if a != b:
        return f"the question definitions (criteria) changed (baseline {a}, new {b})", checks
    return None, checks


def _parse_max_drop(max_drop: str | float | None) -> float | None:
    if max_drop is None or (isinstance(max_drop, str) and max_drop.strip().lower() == "auto"):
        return None
    try:
        value = float(max_drop)
    except (TypeError, ValueError):
        raise JudgelabError(f"--max-drop must be 'auto' or a number >= 0. Got {max_drop!r} instead.") from None
    if value < 0 or math.isnan(value):
        raise JudgelabError(f"--max-drop must be 'auto' or a number >= 0. Got {max_drop!r} instead.")
    return value


def _difference(base: list[ScoreRecord], new: list[ScoreRecord], metric: str, threshold: float,
                n_resamples: int, seed: int | None, confidence: float) -> tuple[Interval, bool, int]:
    b = {r.id: r for r in base}
    shared = [r for r in new if r.id in b and b[r.id].label == r.label]
    paired = len(shared) >= max(1, len(new) / 2)

    def value(y, s):
        return fast_binary_metrics(y, s, threshold)[metric]

    resampling = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    if paired:
        y = np.array([r.label for r in shared])
        sb = np.array([b[r.id].score for r in shared], dtype=float)
        sn = np.array([r.score for r in shared], dtype=float)
        units = np.array([r.fold_key for r in shared])
        return paired_difference(value, [y], [sb], [sn], units=units, **resampling), True, len(shared)

    def arrays(recs):
        return [np.array([r.label for r in recs]), np.array([r.score for r in recs], dtype=float)]

    return unpaired_difference(value, arrays(base), arrays(new), **resampling), False, len(shared)


def gate(
    baseline: Sequence[ScoreRecord],
    new: Sequence[ScoreRecord],
    *,
    threshold: float = 0.5,
    metric: str = "balanced_accuracy",
    max_drop: str | float | None = "auto",
    label_tolerance: float = 0.1,
    resampling: Resampling | None = None,
    **overrides: Any,
) -> GateResult:
    """Compare a new scored run with a baseline; fail on a changed judge, a shifted label mix or a real drop.

    Parameters
    ----------
    baseline, new
        Scored records of one task each (``read_scores``).
    threshold
        The baseline's shipped threshold; both runs are thresholded there.
    metric
        One of ``GATE_METRICS`` (higher is better).
    max_drop
        ``"auto"``: fail when the drop is significant (the interval of
        ``new - baseline`` lies below 0); a number ``X``: fail when it lies
        below ``-X``.
    label_tolerance
        The largest tolerated change in the share of label-1 rows.
    resampling, overrides
        A ``Resampling`` (``n_resamples``, ``confidence``, ``seed``), or those
        fields as keywords: the bootstrap settings.

    Returns
    -------
    GateResult
    """
    rs = with_overrides(Resampling, resampling, overrides, "gate")
    n_resamples, confidence, seed = rs.n_resamples, rs.confidence, rs.seed
    if metric not in GATE_METRICS:
        raise JudgelabError(f"The 'metric' parameter of gate must be one of {', '.join(GATE_METRICS)}. Got {metric!r} instead.")
    limit = _parse_max_drop(max_drop)
    base = [r for r in baseline if r.ok]
    newr = [r for r in new if r.ok]
    if not base or not newr:
        raise DataError(f"The gate needs scored rows in both runs; the baseline has {len(base)}, the new run {len(newr)}.")
    tasks = {r.task for r in base} | {r.task for r in newr}
    if len(tasks) > 1:
        raise DataError(f"The gate compares runs of one task; got {sorted(tasks)}. Gate each task separately.")
    reason, checks = _identity_change(base, newr)
    share_b = float(np.mean([r.label for r in base]))
    share_n = float(np.mean([r.label for r in newr]))
    diff, paired, n_shared = _difference(base, newr, metric, threshold, n_resamples, seed, confidence)
    if paired:  # the point values on the rows the paired test compares
        ids = {r.id for r in newr}
        base_cmp = [r for r in base if r.id in ids]
        new_ids = {r.id for r in base_cmp}
        new_cmp = [r for r in newr if r.id in new_ids]
    else:
        base_cmp, new_cmp = base, newr
    mb = fast_binary_metrics(np.array([r.label for r in base_cmp]), np.array([r.score for r in base_cmp], dtype=float), threshold)
    mn = fast_binary_metrics(np.array([r.label for r in new_cmp]), np.array([r.score for r in new_cmp], dtype=float), threshold)
    if reason is None and abs(share_n - share_b) > label_tolerance:
        reason = (f"the label mix shifted: label 1 share {share_b:.3f} -> {share_n:.3f} "
                  f"(more than the tolerance {label_tolerance:g})")
    bound = 0.0 if limit is None else -limit
    if reason is None and not math.isnan(diff.high) and diff.high < bound:
        reason = (f"{metric} dropped from {mb[metric]:.3f} to {mn[metric]:.3f} ({diff:+.3f}, "
                  f"{'paired' if paired else 'unpaired'} bootstrap): the whole {confidence:.0%} interval is below "
                  f"{bound:+g}")
    return GateResult(
        passed=reason is None, reason=reason or "", metric=metric, threshold=float(threshold),
        baseline=float(mb[metric]), new=float(mn[metric]), difference=diff, paired=paired,
        n_baseline=len(base), n_new=len(newr), n_shared=n_shared, label_share_baseline=share_b,
        label_share_new=share_n, label_tolerance=label_tolerance, max_drop=limit, checks=checks,
    )
