"""The report's "Deployment" section: the policy, its risk-coverage curve, and the gate and estimate commands."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgelab.calibration.policy import Policy
from judgelab.calibration.report._model import Code, Facts, Figure, Paragraph, Section
from judgelab.evaluators import HeldoutPolicy

__all__ = ["Deployment", "deployment_section", "risk_coverage_png"]


@dataclass(frozen=True)
class Deployment:
    """One task's deployment facts: its policy, where it was saved, its curve and the commands.

    The pipeline fits and saves the policy (``deployment_for`` in ``calibration.pipeline``); the report renders this.
    """

    task: str
    policy: Policy
    policy_file: str
    curve: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]  # coverage, lowest risk at that coverage (all rows, in-sample)
    commands: tuple[tuple[str, str], ...]  # (what, command)


def _rows(dep: Deployment) -> list[tuple[str, str]]:
    p = dep.policy
    held = p.heldout if isinstance(p.heldout, HeldoutPolicy) else None

    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.4f}"

    rows = [
        ("decision", "FAIL below lower, PASS at or above upper, ABSTAIN between"),
        ("lower / upper", f"{f(p.lower)} / {f(p.upper)}"),
        ("guarantee", f"{p.risk} among decided rows <= {p.alpha:g} with probability >= {1 - p.delta:g}"),
        ("method", f"{p.method} ({p.n} rows, {p.n_units} units of up to {p.unit_size} rows)"),
        ("coverage on calibration rows", f"{(p.calibration.coverage or 0):.3f}"),
        ("held-out coverage", f"{held.coverage} ({held.mode})" if held else "n/a"),
        (f"held-out {p.risk} among decided", format(held.risk) if held and held.risk is not None else "n/a"),
        ("file", dep.policy_file),
    ]
    if not p.feasible:
        rows.append(("note", p.note))
    return rows


def deployment_section(dep: Deployment, *, figure: str | None = None, png: bytes | None = None) -> Section:
    """One task's Deployment section: the policy described and tabulated, its risk-coverage plot, the commands.

    Parameters
    ----------
    dep
        The task's deployment facts.
    figure
        The risk-coverage figure's path for markdown (``figures/TASK-risk-coverage.png``); None: not linked.
    png
        Its PNG bytes for HTML; None: not embedded.

    Returns
    -------
    Section
    """
    return Section(f"Deployment ({dep.task})", (
        Paragraph(dep.policy.describe()),
        Facts(tuple(_rows(dep))),
        Paragraph(f"Method: {dep.policy.citation}.", kind="note"),
        Figure("Risk against coverage", figure, png),
        Paragraph("Commands for this run:"),
        Code("\n".join(f"# {what}\n{cmd}" for what, cmd in dep.commands)),
    ))


def risk_coverage_png(dep: Deployment) -> bytes:
    """The risk-coverage figure: the in-sample frontier, alpha, and the policy (calibration and held-out)."""
    from judgelab.calibration.report._plots import _plt, _png

    plt = _plt()
    p = dep.policy
    fig, ax = plt.subplots(figsize=(5, 3.8))
    cov, risk = dep.curve
    ax.plot(cov, risk, drawstyle="steps-post", label="lowest in-sample risk at coverage")
    ax.axhline(p.alpha, c="red", ls="--", lw=1, label=f"alpha = {p.alpha:g}")
    if p.feasible:
        ax.scatter([p.calibration.coverage or 0], [p.calibration.risk or 0], c="black", zorder=3,
                   label="policy (calibration rows)")
    held = p.heldout if isinstance(p.heldout, HeldoutPolicy) else None
    c, r = (held.coverage, held.risk) if held is not None else (None, None)
    if c is not None and r is not None and c.estimate is not None and r.estimate is not None:
        ax.errorbar([c.estimate], [r.estimate],
                    xerr=[[c.estimate - (c.low or c.estimate)], [(c.high or c.estimate) - c.estimate]],
                    yerr=[[r.estimate - (r.low or r.estimate)], [(r.high or r.estimate) - r.estimate]],
                    fmt="o", c="green", label="policy (held-out, 95% CI)")
    ax.set(xlabel="coverage (share of rows decided)", ylabel=f"{p.risk} among decided rows", xlim=(0, 1.02),
           ylim=(0, max(0.6, float(np.nanmax(risk)) if np.isfinite(risk).any() else 0.6)), title="Risk against coverage")
    ax.legend(fontsize=7, loc="upper left")
    return _png(fig)
