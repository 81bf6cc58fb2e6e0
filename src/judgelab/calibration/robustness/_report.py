"""The "Robustness" section of report.md and report.html, and its plot of score change per attack."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.calibration.analysis import Interval
from judgelab.calibration.report import Block, Figure, Paragraph, Section, table_section

if TYPE_CHECKING:  # pragma: no cover
    from judgelab.calibration.robustness._results import TaskStress

__all__ = ["robustness_figure", "robustness_section", "robustness_sections", "write_robustness_figures"]

def _pct(iv: Interval) -> str:
    if math.isnan(iv.estimate):
        return "n/a"
    if math.isnan(iv.low):
        return f"{100 * iv.estimate:.0f}%"
    return f"{100 * iv.estimate:.0f}% [{100 * iv.low:.0f}, {100 * iv.high:.0f}]"


def _num(iv: Interval) -> str:
    return format(iv, "+.3f") if not math.isnan(iv.estimate) else "n/a"


def robustness_sections(s: "TaskStress") -> list[Section]:
    """One task's stress figures: a section per table, with its note."""
    tables = [table_section(
        "Attacks and perturbations (95% cluster-bootstrap intervals)",
        ["perturbation", "family", "rows", "FAIL→PASS (label 0)", "PASS→FAIL (label 1)", "mean ΔP", "mean ΔP, label 0"],
        [[a.key, a.family, str(a.n), f"{_pct(a.fail_to_pass)} of {a.n_fail}", f"{_pct(a.pass_to_fail)} of {a.n_pass}",
          _num(a.delta_p), _num(a.delta_p_fail)] for a in s.attacks],
        (f"Verdicts at the shipped threshold {s.threshold:.3f}. FAIL→PASS: among rows labelled 0 that the clean "
         "judge failed, the share the perturbed row passes (the dangerous direction). PASS→FAIL: among rows "
         "labelled 1 that the clean judge passed, the share it now fails. ΔP = perturbed score - clean score. "
         "Benign perturbations should move nothing."),
    )]
    if s.consistency:
        tables.append(table_section(
            "Consistency",
            ["check", "rows", "mean inconsistency", "also"],
            [[c.check, str(c.n), format(c.value, ".3f"),
              "; ".join(f"{k}: {format(v, '+.3f')}" for k, v in c.extra.items())] for c in s.consistency],
            " ".join(f"{c.check}: {c.description}." for c in s.consistency),
        ))
    if s.label_mass is not None:
        m = s.label_mass
        tables.append(table_section(
            "Label mass (share of the full next-token probability on the labels)",
            ["rows", *m.quantiles, f"rows at or below {m.low_mass:.3g}", "accuracy, low mass", "accuracy, rest", "rest - low"],
            [[str(m.n), *(f"{v:.3f}" for v in m.quantiles.values()), str(m.n_low), format(m.accuracy_low, ".3f"),
              format(m.accuracy_high, ".3f"), format(m.difference, "+.3f")]],
            ("Low-mass answers are measurably less accurate: an abstain reason."
             if m.low_is_worse else
             "Low-mass answers are not measurably less accurate on these rows (the interval of the difference includes 0 or is n/a)."),
        ))
    if s.fence is not None:
        f = s.fence
        tables.append(table_section(
            "Defence: fenced template (same rows, before and after)",
            ["", "threshold", "held-out balanced accuracy", "dangerous flip rate, all attacks pooled"],
            [["shipped template", f"{f.threshold_before:.3f}", format(f.balanced_accuracy_before, ".3f"), _pct(f.flip_before)],
             ["fenced template", f"{f.threshold_after:.3f}", format(f.balanced_accuracy_after, ".3f"), _pct(f.flip_after)]],
            f"Flip-rate difference (shipped - fenced, paired by row): {format(f.flip_difference, '+.3f')}. Verdict: {f.verdict()}.",
        ))
    if s.skipped:
        tables.append(table_section("Not measured", ["what"], [[k] for k in s.skipped],
                       "These did not apply to any row (e.g. reordering needs two or more documents) or need a judge model."))
    return tables


def robustness_figure(s: "TaskStress") -> bytes | None:
    """PNG: per-row ΔP of every perturbation, with the mean and its interval."""
    if not s.attacks:
        return None
    from judgelab.calibration.report._plots import _plt, _png  # the report's matplotlib setup (Agg)

    plt = _plt()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        attacks = list(s.attacks)
        fig, ax = plt.subplots(figsize=(7, 0.35 * len(attacks) + 1.4))
        for i, a in enumerate(attacks):
            color = "tab:green" if a.kind == "benign" else ("tab:orange" if a.kind == "evidence" else "tab:red")
            ax.scatter(a.deltas, [i] * len(a.deltas), s=8, alpha=0.35, color=color)
            d = a.delta_p
            if not math.isnan(d.estimate):
                err = None if math.isnan(d.low) else [[d.estimate - d.low], [d.high - d.estimate]]
                ax.errorbar([d.estimate], [i], xerr=err, fmt="D", color="black", ms=4, capsize=3)
        ax.axvline(0, color="grey", lw=1)
        ax.set_yticks(range(len(attacks)), [a.key for a in attacks], fontsize=8)
        ax.invert_yaxis()
        ax.set(xlabel="ΔP = perturbed score - clean score (per row; mean and 95% interval in black)",
               title=f"{s.task}: score change per perturbation", xlim=(-1, 1))
        return _png(fig)


def robustness_section(tasks: Mapping[str, "TaskStress"], figures: Mapping[str, str] | None = None,
                       pngs: Mapping[str, bytes] | None = None) -> Section:
    """The "Robustness" section: the headline per task, then per task its tables and its ΔP plot.

    Parameters
    ----------
    tasks
        ``{task: TaskStress}``.
    figures
        ``{task: path}`` of each task's ΔP plot, for markdown.
    pngs
        ``{task: PNG}`` of each task's ΔP plot, for HTML.

    Returns
    -------
    Section
    """
    figures, pngs = figures or {}, pngs or {}
    blocks: list[Block] = [Paragraph(f"{s.headline()}.", lead=f"{t}:", kind="headline") for t, s in tasks.items()]
    for t, s in tasks.items():
        blocks.append(Section(f"{t}: stress run with {s.evaluator} on {s.n_rows} rows", (
            *robustness_sections(s), Figure("Score change per perturbation", figures.get(t), pngs.get(t)))))
    return Section("Robustness", tuple(blocks))


def write_robustness_figures(tasks: Mapping[str, "TaskStress"], out_dir: str | Path) -> dict[str, bytes]:
    """Each task's ΔP plot, written as ``figures/TASK-robustness.png`` under ``out_dir``; ``{task: PNG}``.

    ``robustness_section`` links and embeds them; the section is one of the calibration report's
    (``CalibrationResult.write_report(sections=...)``), rendered with it.
    """
    out = Path(out_dir)
    pngs: dict[str, bytes] = {}
    for t, s in tasks.items():
        png = robustness_figure(s)
        if png is not None:
            (out / "figures").mkdir(parents=True, exist_ok=True)
            (out / "figures" / f"{t}-robustness.png").write_bytes(png)
            pngs[t] = png
    return pngs
