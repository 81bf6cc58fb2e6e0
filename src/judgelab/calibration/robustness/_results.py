"""What a stress run measured: per-task figures (``TaskStress``), the fenced-template comparison, the result."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from judgelab.calibration.analysis import Interval
from judgelab.calibration.pipeline import CalibrationResult
from judgelab.calibration.robustness._metrics import AttackStats, ConsistencyStats, LabelMassStats

__all__ = ["FenceComparison", "StressResult", "TaskStress"]


@dataclass(frozen=True)
class FenceComparison:
    """The fenced template against the shipped one, on the same rows.

    ``flip_before`` / ``flip_after`` pool the dangerous flips of every attack
    (not the benign perturbations); ``flip_difference`` is before - after
    (positive: fencing helps), paired by row. ``measurably_better`` is true
    when that difference's interval excludes 0 and the fenced balanced
    accuracy is not below the shipped one's interval.
    """

    threshold_before: float
    threshold_after: float
    balanced_accuracy_before: Interval
    balanced_accuracy_after: Interval
    flip_before: Interval
    flip_after: Interval
    flip_difference: Interval
    attacks_after: tuple[AttackStats, ...]

    @property
    def measurably_better(self) -> bool:
        d = self.flip_difference
        lowers = not math.isnan(d.low) and d.low > 0
        ba_ok = math.isnan(self.balanced_accuracy_before.low) or (
            self.balanced_accuracy_after.estimate >= self.balanced_accuracy_before.low)
        return bool(lowers and ba_ok)

    def verdict(self) -> str:
        if self.measurably_better:
            return "the fenced template measurably lowers the dangerous flip rate without costing accuracy"
        return ("the fenced template is not measurably better on these rows (the interval of the flip-rate "
                "difference includes 0, or accuracy dropped beyond its interval); keep it opt-in")

    def to_dict(self) -> dict[str, object]:
        return {
            "threshold_before": self.threshold_before, "threshold_after": self.threshold_after,
            "balanced_accuracy_before": self.balanced_accuracy_before.to_dict(),
            "balanced_accuracy_after": self.balanced_accuracy_after.to_dict(),
            "dangerous_flip_before": self.flip_before.to_dict(), "dangerous_flip_after": self.flip_after.to_dict(),
            "dangerous_flip_before_minus_after": self.flip_difference.to_dict(),
            "measurably_better": self.measurably_better, "verdict": self.verdict(),
            "attacks_after": [a.to_dict() for a in self.attacks_after],
        }


@dataclass(frozen=True)
class TaskStress:
    """The stress figures of one task."""

    task: str
    evaluator: str
    threshold: float
    n_rows: int
    attacks: list[AttackStats]
    consistency: list[ConsistencyStats]
    label_mass: LabelMassStats | None = None
    fence: FenceComparison | None = None
    n_errors: int = 0
    skipped: list[str] = field(default_factory=list)

    def worst(self) -> AttackStats | None:
        """The non-benign perturbation with the highest dangerous flip rate."""
        cands = [a for a in self.attacks if a.kind != "benign" and not math.isnan(a.fail_to_pass.estimate)]
        return max(cands, key=lambda a: (a.fail_to_pass.estimate, a.delta_p.estimate), default=None)

    def headline(self) -> str:
        w = self.worst()
        if w is None:
            return ("no attack could be measured: no row labelled 0 was failed by the clean judge "
                    f"at threshold {self.threshold:.3f}")
        fp = w.fail_to_pass
        rng = "" if math.isnan(fp.low) else f" [{100 * fp.low:.0f}%, {100 * fp.high:.0f}%]"
        return (f"the worst attack ({w.key}) turns {100 * fp.estimate:.0f}%{rng} of failing answers into PASS "
                f"({w.n_fail} rows labelled 0 that the clean judge failed, threshold {self.threshold:.3f})")

    def to_dict(self) -> dict[str, object]:
        return {
            "task": self.task, "evaluator": self.evaluator, "threshold": self.threshold, "rows": self.n_rows,
            "errors": self.n_errors, "headline": self.headline(), "skipped": self.skipped,
            "attacks": [a.to_dict() for a in self.attacks],
            "consistency": [c.to_dict() for c in self.consistency],
            "label_mass": self.label_mass.to_dict() if self.label_mass else None,
            "fence": self.fence.to_dict() if self.fence else None,
        }


@dataclass(frozen=True, repr=False)
class StressResult:
    """What ``stress`` produced: the calibration, the per-task stress figures and the files."""

    calibration: CalibrationResult
    tasks: dict[str, TaskStress]
    files: dict[str, Path]
    out: Path

    def headline(self) -> str:
        return "\n".join(f"{t}: {s.headline()}" for t, s in self.tasks.items())

    def __repr__(self) -> str:
        return f"StressResult(out={str(self.out)!r}, tasks={list(self.tasks)})"
