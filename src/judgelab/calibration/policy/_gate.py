"""A drift gate for CI: has the judge, its prompt or its data changed beyond what was measured?

``gate(baseline, new)`` compares two scored runs of one task and fails on
any of:

1. the judge changed: model spec hash, template hash, evaluator or the
   criteria (question definitions) differ;
2. the labels changed: rows are matched by id, and more shared rows than
   ``max_label_changes`` (default 5% of them) carry another label in the new
   set. A relabelled set is drift in itself, whatever the metric says;
3. the label mix shifted: the share of label 1 moved by more than
   ``label_tolerance`` (absolute), so the metric would not be comparable;
4. the metric dropped beyond its uncertainty, at the baseline's threshold:
   a **paired** bootstrap over the rows both runs scored, each row's
   correctness under the baseline (its baseline label and score) against
   its correctness under the new set (its new label and score), so a row
   whose label, documents or response changed counts as what it is; rows of
   one unit (``ScoreRecord.unit``) are drawn together. When some rows are in one
   run only, an **unpaired** bootstrap of the whole runs (each resampled on
   its own) is run as well, and the output says how many rows it covered.
   With ``max_drop="auto"`` a test fails when its whole interval of
   ``new - baseline`` lies below 0; with a number ``X``, below ``-X``;
5. a floor is not met (``GateFloors``, opt-in): the new run has fewer
   labelled rows than ``min_rows`` (checked right after the judge), or its
   Cohen's kappa at the baseline's threshold is below ``min_kappa``
   (checked last). The new run's kappa, TPR and TNR are always reported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from judgelab.calibration._options import options_or_default
from judgelab.calibration.analysis import (
    Agreement,
    Interval,
    PairResampling,
    Resampling,
    fast_binary_metrics,
    pair_units,
    paired_difference,
    unpaired_difference,
)
from judgelab.calibration.data import RowChanges, ScoreRecord, judge_values, row_changes
from judgelab.calibration.policy._floors import GateFloors, new_run_agreement
from judgelab.errors import DataError, JudgelabError

__all__ = ["GateBootstrap", "GateFloors", "GateResult", "GateTest", "gate"]

GATE_METRICS = ("accuracy", "balanced_accuracy", "f1", "mcc", "auroc", "auprc", "precision", "recall")


@dataclass(frozen=True)
class GateTest:
    """One bootstrap test of ``new - baseline``: which test, on which rows, and its interval."""

    kind: str  # "paired" | "unpaired"
    difference: Interval
    baseline: float
    new: float
    n_baseline: int
    n_new: int
    resampling: PairResampling
    resampling_new: PairResampling | None = None

    def describe(self, metric: str) -> str:
        if self.kind == "paired":
            rows = f"paired bootstrap on {self.n_new} shared rows ({self.resampling.describe()})"
        else:
            rows = (f"unpaired bootstrap on all rows ({self.n_baseline} baseline, {self.n_new} new; "
                    f"baseline: {self.resampling.describe()}; new: {self.resampling_new.describe() if self.resampling_new is not None else 'n/a'})")
        return (f"{rows}: {metric} baseline {self.baseline:.3f}, new {self.new:.3f}; "
                f"new - baseline {self.difference:+.3f} ({self.difference.confidence:.0%} bootstrap interval)")

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "difference": self.difference.to_dict(), "baseline": _num(self.baseline),
                "new": _num(self.new), "n_baseline": self.n_baseline, "n_new": self.n_new,
                "resampling": self.resampling.to_dict(),
                "resampling_new": self.resampling_new.to_dict() if self.resampling_new else None}


def _num(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict: ``passed`` and, when it failed, ``reason`` (one line).

    ``tests`` holds the paired test (on the shared rows, when there are any)
    and the unpaired one (when some rows are in one run only); ``difference``,
    ``baseline``, ``new`` and ``paired`` are those of the first. ``changes``
    says which shared rows changed and how.
    """

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
    tests: tuple[GateTest, ...] = ()
    changes: RowChanges | None = None
    max_label_changes: int = 0
    agreement: Agreement | None = None
    floors: GateFloors = field(default_factory=GateFloors)

    def lines(self) -> list[str]:
        """The comparison, for people: every test with the rows it covered, what changed, the checks."""
        out = [f"{self.metric} at threshold {self.threshold:.3f}; {self.n_baseline} baseline rows, {self.n_new} new, "
               f"{self.n_shared} shared (matched by id)"]
        out += [t.describe(self.metric) for t in self.tests]
        if self.changes is not None:
            c = self.changes
            out.append(f"rows changed since the baseline: {c.describe()} "
                       f"(label changes allowed: {self.max_label_changes})")
            if c.only_baseline or c.only_new:
                out.append(f"not paired: {len(c.only_new)} rows only in the new set, "
                           f"{len(c.only_baseline)} only in the baseline (compared unpaired)")
        out.append(f"label 1 share: baseline {self.label_share_baseline:.3f}, new {self.label_share_new:.3f} "
                   f"(tolerance {self.label_tolerance:g})")
        out += [f"{k}: {v}" for k, v in self.checks.items()]
        if self.agreement is not None:
            g = self.agreement
            out.append(f"agreement of the new run with its labels at threshold {g.threshold:.3f} ({g.n} rows): "
                       f"Cohen's kappa {g.cohen_kappa:.3f}, TPR {g.tpr:.3f}, TNR {g.tnr:.3f} (floors: {self.floors.describe()})")
        return out

    def to_dict(self) -> dict[str, object]:
        return {"passed": self.passed, "reason": self.reason, "metric": self.metric, "threshold": self.threshold,
                "baseline": self.baseline, "new": self.new, "difference": self.difference.to_dict(),
                "paired": self.paired, "n_baseline": self.n_baseline, "n_new": self.n_new, "n_shared": self.n_shared,
                "label_share_baseline": self.label_share_baseline, "label_share_new": self.label_share_new,
                "label_tolerance": self.label_tolerance, "max_drop": self.max_drop, "checks": self.checks,
                "tests": [t.to_dict() for t in self.tests],
                "changes": self.changes.to_dict() if self.changes is not None else None,
                "max_label_changes": self.max_label_changes,
                "agreement": self.agreement.model_dump() if self.agreement is not None else None,
                "min_rows": self.floors.min_rows, "min_kappa": self.floors.min_kappa}


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


def _parse_max_label_changes(value: str | float | int | None, n_shared: int) -> int:
    """How many shared rows may change label: ``"5%"`` (of the shared rows), a fraction below 1, or a count."""
    text = "5%" if value is None else str(value).strip()
    bad = JudgelabError(f"--max-label-changes must be a percentage (5%), a fraction below 1 (0.05) or a count "
                        f"of rows (3). Got {value!r} instead.")
    m = re.fullmatch(r"(\d+(?:\.\d*)?)\s*%", text)
    try:
        number = float(m.group(1)) / 100 if m else float(text)
    except ValueError:
        raise bad from None
    if math.isnan(number) or number < 0 or (m and number > 1):
        raise bad
    if m or number < 1:
        return int(math.floor(number * n_shared + 1e-9))
    if number != int(number):
        raise bad
    return int(number)


#: The gate's bootstrap settings (resamples, interval level, seed): the shared ``Resampling``.
GateBootstrap = Resampling


@dataclass(frozen=True)
class _Settings:
    metric: str
    threshold: float
    resampling: Resampling


def _metric(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], st: _Settings) -> float:
    return float(fast_binary_metrics(y, s, st.threshold)[st.metric])


def _paired_test(base: dict[str, ScoreRecord], new: dict[str, ScoreRecord], ids: Sequence[str],
                 st: _Settings) -> GateTest:
    """Each shared id's correctness under the baseline against under the new set, units drawn together."""
    yb = np.array([base[i].label for i in ids])
    sb = np.array([base[i].score for i in ids], dtype=float)
    yn = np.array([new[i].label for i in ids])
    sn = np.array([new[i].score for i in ids], dtype=float)
    units = pair_units([base[i].unit for i in ids], [new[i].unit for i in ids])
    rs = st.resampling
    d = paired_difference(lambda y, s: _metric(y, s, st), [], [yb, sb], [yn, sn], units=units,
                          n_resamples=rs.n_resamples, confidence=rs.confidence, seed=rs.seed)
    how = PairResampling(len(ids), len(np.unique(units)))
    return GateTest("paired", d, _metric(yb, sb, st), _metric(yn, sn, st), len(ids), len(ids), how)


def _unpaired_test(base: Sequence[ScoreRecord], new: Sequence[ScoreRecord], st: _Settings) -> GateTest:
    """The whole runs, each resampled on its own (by its units)."""

    def side(recs: Sequence[ScoreRecord]) -> tuple[list[npt.NDArray[Any]], npt.NDArray[np.int_], PairResampling]:
        units = pair_units([r.unit for r in recs])
        arrays = [np.array([r.label for r in recs]), np.array([r.score for r in recs], dtype=float)]
        return arrays, units, PairResampling(len(recs), len(np.unique(units)))

    (ab, ub, hb), (an, un, hn) = side(base), side(new)
    rs = st.resampling
    iv = unpaired_difference(lambda y, s: _metric(y, s, st), ab, an, units=(ub, un),
                             n_resamples=rs.n_resamples, confidence=rs.confidence, seed=rs.seed)
    return GateTest("unpaired", iv, _metric(ab[0], ab[1], st), _metric(an[0], an[1], st), len(base), len(new), hb, hn)


def _check_inputs(baseline: Sequence[ScoreRecord], new: Sequence[ScoreRecord],
                  metric: str) -> tuple[list[ScoreRecord], list[ScoreRecord]]:
    if metric not in GATE_METRICS:
        raise JudgelabError(f"The 'metric' parameter of gate must be one of {', '.join(GATE_METRICS)}. Got {metric!r} instead.")
    base = list({r.id: r for r in baseline if r.ok}.values())
    newr = list({r.id: r for r in new if r.ok}.values())
    if not base or not newr:
        raise DataError(f"The gate needs scored rows in both runs; the baseline has {len(base)}, the new run {len(newr)}.")
    tasks = {r.task for r in base} | {r.task for r in newr}
    if len(tasks) > 1:
        raise DataError(f"The gate compares runs of one task; got {sorted(tasks)}. Gate each task separately.")
    return base, newr


def _first_failure(reason: str | None, changes: RowChanges, allowed: int, shares: tuple[float, float],
                   label_tolerance: float, tests: Sequence[GateTest], bound: float, metric: str) -> str | None:
    if reason is not None:
        return reason
    flipped = changes.label_changed
    if len(flipped) > allowed:
        share = len(flipped) / max(len(changes.shared), 1)
        return (f"the labels of {len(flipped)} of {len(changes.shared)} shared rows changed ({share:.0%}), more "
                f"than --max-label-changes allows ({allowed}): {', '.join(flipped[:10])}"
                + (f" (+{len(flipped) - 10} more)" if len(flipped) > 10 else "")
                + "; if the new labels are right, calibrate on the new set and make it the baseline")
    share_b, share_n = shares
    if abs(share_n - share_b) > label_tolerance:
        return (f"the label mix shifted: label 1 share {share_b:.3f} -> {share_n:.3f} "
                f"(more than the tolerance {label_tolerance:g})")
    for t in tests:
        if not math.isnan(t.difference.high) and t.difference.high < bound:
            rows = (f"paired on {t.n_new} shared rows" if t.kind == "paired"
                    else f"unpaired, {t.n_baseline} baseline and {t.n_new} new rows")
            return (f"{metric} dropped from {t.baseline:.3f} to {t.new:.3f} ({t.difference:+.3f}, {rows}): "
                    f"the whole {t.difference.confidence:.0%} interval is below {bound:+g}")
    return None


def gate(
    baseline: Sequence[ScoreRecord],
    new: Sequence[ScoreRecord],
    *,
    threshold: float = 0.5,
    metric: str = "balanced_accuracy",
    max_drop: str | float | None = "auto",
    label_tolerance: float = 0.1,
    max_label_changes: str | float | int | None = "5%",
    resampling: Resampling | None = None,
    floors: GateFloors | None = None,
) -> GateResult:
    """Compare a new scored run with a baseline; fail on a changed judge, changed labels, a shifted mix or a drop.

    Parameters
    ----------
    baseline, new
        Scored records of one task each (``read_scores``); rows are matched by id.
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
    max_label_changes
        How many shared rows may carry another label in the new set:
        ``"5%"`` (the default, of the shared rows), a fraction below 1, or a
        count. More fails the gate by itself.
    resampling
        A ``Resampling`` (``n_resamples``, ``confidence``, ``seed``; also
        exported as ``GateBootstrap``): the bootstrap settings (None: its
        defaults).
    floors
        A ``GateFloors`` (``min_rows``, ``min_kappa``): floors the new run
        must reach (None: no floor).

    Returns
    -------
    GateResult
    """
    floors = options_or_default(GateFloors, floors, "gate", name="floors", example="min_rows=50")
    floors.check()
    rs = options_or_default(Resampling, resampling, "gate", name="resampling", example="n_resamples=2000")
    base, newr = _check_inputs(baseline, new, metric)
    limit = _parse_max_drop(max_drop)
    st = _Settings(metric, float(threshold), rs)
    reason, checks = _identity_change(base, newr)
    changes = row_changes(base, newr)
    allowed = _parse_max_label_changes(max_label_changes, len(changes.shared))
    b, n = {r.id: r for r in base}, {r.id: r for r in newr}
    tests: list[GateTest] = []
    if changes.shared:
        tests.append(_paired_test(b, n, changes.shared, st))
    if changes.only_baseline or changes.only_new:
        tests.append(_unpaired_test(base, newr, st))
    shares = float(np.mean([r.label for r in base])), float(np.mean([r.label for r in newr]))
    bound = 0.0 if limit is None else -limit
    reason = _first_failure(reason or floors.rows_failure(len(newr)), changes, allowed, shares, label_tolerance, tests,
                            bound, metric)
    agree = new_run_agreement(newr, float(threshold), rs)
    reason = reason or floors.kappa_failure(agree)
    first = tests[0]
    return GateResult(
        passed=reason is None, reason=reason or "", metric=metric, threshold=float(threshold),
        baseline=first.baseline, new=first.new, difference=first.difference, paired=first.kind == "paired",
        n_baseline=len(base), n_new=len(newr), n_shared=len(changes.shared), label_share_baseline=shares[0],
        label_share_new=shares[1], label_tolerance=label_tolerance, max_drop=limit, checks=checks,
        tests=tuple(tests), changes=changes, max_label_changes=allowed, agreement=agree, floors=floors,
    )
