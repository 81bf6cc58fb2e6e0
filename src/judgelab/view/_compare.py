"""Two runs side by side: ``compare_runs``'s paired figures per task, and the rows whose verdicts differ."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from judgelab.calibration import Comparison, compare_runs
from judgelab.calibration.report import Paragraph, Section, Table
from judgelab.errors import JudgelabError
from judgelab.view._run import ViewRun

__all__ = ["PairedRow", "TaskComparison", "compare_views", "comparison_section", "differing_rows"]


@dataclass(frozen=True)
class TaskComparison:
    """One task's comparison of run A and run B, or why there is none."""

    task: str
    comparison: Comparison | None
    problem: str | None = None


@dataclass(frozen=True)
class PairedRow:
    """A row both runs scored, with each run's score and verdict at its shipped threshold."""

    id: str
    task: str
    label: int
    score_a: float
    score_b: float
    pass_a: bool
    pass_b: bool


def compare_views(a: ViewRun, b: ViewRun, *, n_resamples: int = 1000, seed: int | None = 0) -> list[TaskComparison]:
    """``compare_runs`` on each task both runs hold, at each run's shipped threshold."""
    out = []
    for task in sorted(set(a.tasks) & set(b.tasks)):
        ra = [r for r in a.records if r.task == task]
        rb = [r for r in b.records if r.task == task]
        try:
            c = compare_runs(ra, rb, threshold_a=a.thresholds[task], threshold_b=b.thresholds[task],
                             n_resamples=n_resamples, seed=seed)
            out.append(TaskComparison(task, c))
        except JudgelabError as exc:
            out.append(TaskComparison(task, None, str(exc)))
    return out


def differing_rows(a: ViewRun, b: ViewRun) -> list[PairedRow]:
    """Rows both runs scored whose verdicts differ, largest score gap first."""
    ca, cb = a.columns, b.columns
    assert ca is not None and cb is not None
    out = []
    for rid, i in a.index.items():
        j = b.index.get(rid)
        if j is None or np.isnan(ca.score[i]) or np.isnan(cb.score[j]) or ca.passed[i] == cb.passed[j]:
            continue
        out.append(PairedRow(rid, a.records[i].task, a.records[i].label, float(ca.score[i]), float(cb.score[j]),
                             bool(ca.passed[i]), bool(cb.passed[j])))
    out.sort(key=lambda r: -abs(r.score_a - r.score_b))
    return out


def _f(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:.3f}"


def comparison_section(a: ViewRun, b: ViewRun, comparisons: list[TaskComparison]) -> Section:
    """The paired figures as a report section (rendered by the report renderer)."""
    blocks: list[Paragraph | Section] = [Paragraph(f"A is {a.name}, B is {b.name}. Each judge's verdicts are at its "
                                                   "own shipped threshold; the intervals are a paired bootstrap over "
                                                   "the shared rows (rows of one unit drawn together).", kind="note")]
    for tc in comparisons:
        c = tc.comparison
        if c is None:
            blocks.append(Section(tc.task, (Paragraph(tc.problem or "not comparable", kind="warning"),)))
            continue
        rows = tuple((k, _f(c.metrics_a[k]), _f(c.metrics_b[k]),
                      f"{d.estimate:+.3f} [{d.low:+.3f}, {d.high:+.3f}]") for k, d in c.difference.items())
        blocks.append(Section(tc.task, (
            Paragraph(f"{c.n} shared rows (A threshold {c.threshold_a:.3f}, B threshold {c.threshold_b:.3f}); "
                      f"{c.only_a} only in A, {c.only_b} only in B."),
            Table(("metric", "A", "B", "B - A [95% CI]"), rows),
            Paragraph(f"McNemar: only A right on {c.mcnemar_b} rows, only B right on {c.mcnemar_c}, "
                      f"p = {c.mcnemar_p:.3g}."),
        )))
    return Section("Paired comparison", tuple(blocks))
