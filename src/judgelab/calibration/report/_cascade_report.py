"""The cascade report: how a fitted cascade does on held-out rows against each of its stages alone.

``write_cascade_report`` writes ``heldout_cascade``'s numbers (coverage,
error among decided rows, cost per row and the share decided at each
stage, with bootstrap intervals over whole units): ``cascade_report`` puts them in a
``Report``, written as ``cascade.md`` with a plot (``cascade.png``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from judgelab.calibration.report._model import Block, Figure, Paragraph, Report, Section, Table
from judgelab.calibration.report._render import render_markdown
from judgelab.evaluators import CascadePolicy, HeldoutCascade, IntervalRecord

__all__ = ["cascade_report", "write_cascade_report"]


def _text(iv: IntervalRecord | None) -> str:
    return "n/a" if iv is None else format(iv)


def _held_out_table(policy: CascadePolicy, held: HeldoutCascade) -> Table:
    """The held-out table: coverage, error, cost and stage shares of the cascade and of each stage alone."""
    K = len(policy.stages)
    head = ["system", "coverage", "error among decided", f"cost per row ({policy.cost_unit})",
            *[f"decided by {s.name}" for s in policy.stages]]
    rows = []
    for name, st in held.systems.items():
        mine = [format(iv) for iv in st.stage_shares or ()]
        shares = [mine[k] if k < len(mine) else "" for k in range(K)]
        if name != "cascade":
            shares = [mine[0] if mine and s.name + " alone" == name else "" for s in policy.stages]
        rows.append((name, _text(st.coverage), _text(st.error), _text(st.cost), *shares))
    return Table(tuple(head), tuple(rows))


def _estimate(iv: IntervalRecord | None) -> float:
    return 0 if iv is None or iv.estimate is None else iv.estimate


def _plot(held: HeldoutCascade, path: Path, policy: CascadePolicy) -> Path | None:
    from judgelab.calibration.report._plots import _plt

    plt = _plt()
    names = list(held.systems)
    vals = [held.systems[n] for n in names]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
    x = np.arange(len(names))
    a.bar(x, [_estimate(v.cost) for v in vals], color="#4c72b0")
    a.set_xticks(x, names, rotation=15, fontsize=8)
    a.set_ylabel(f"cost per row ({policy.cost_unit})")
    a.set_title("cost")
    cov = [_estimate(v.coverage) for v in vals]
    err = [_estimate(v.error) for v in vals]
    b.bar(x - 0.2, cov, 0.4, label="coverage", color="#55a868")
    b.bar(x + 0.2, err, 0.4, label="error among decided", color="#c44e52")
    b.axhline(policy.alpha, ls="--", color="k", lw=1, label=f"alpha = {policy.alpha:g}")
    b.set_xticks(x, names, rotation=15, fontsize=8)
    b.set_ylim(0, 1)
    b.legend(fontsize=7)
    b.set_title(f"held-out ({held.mode})")
    fig.tight_layout()
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)
    return path


def cascade_report(policy: CascadePolicy, held: HeldoutCascade | None, *, figure: str | None = None) -> Report:
    """The cascade report: the policy, its stages and bands, then the held-out comparison.

    Parameters
    ----------
    policy
        The fitted cascade.
    held
        ``heldout_cascade``'s result; None: too few units for a held-out estimate.
    figure
        The plot's path for markdown (``cascade.png``); None: no plot.

    Returns
    -------
    Report
    """
    stages = tuple((s.name, s.model or "?", f"{'-' if s.lower is None else f'{s.lower:.4f}'} / "
                    f"{'-' if s.upper is None else f'{s.upper:.4f}'}", f"{s.cost:.1f}") for s in policy.stages)
    blocks: list[Block] = [
        Paragraph(policy.describe()),
        Table(("stage", "model", "band (FAIL below, PASS at or above)", "cost per row"), stages),
    ]
    if policy.rows_needed:
        blocks.append(Paragraph(f"Rows needed for a guarantee with coverage: about {policy.rows_needed} "
                                f"({policy.units_needed} units), against {policy.n} here."))
    if held:
        blocks.append(Section(f"Held-out ({held.mode}, {held.n} rows; 95% cluster-bootstrap intervals)",
                              (_held_out_table(policy, held), Figure("cascade", figure))))
    else:
        blocks.append(Paragraph("Too few units for a held-out estimate."))
    return Report(f"Cascade: {' -> '.join(s.name for s in policy.stages)} ({policy.task})", tuple(blocks))


def write_cascade_report(policy: CascadePolicy, held: HeldoutCascade | None, out: str | Path, *, figures: bool = True) -> Path:
    """Write ``cascade.md`` (and ``cascade.png``) in ``out``; returns the markdown's path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figure = None
    if held and figures:
        _plot(held, out / "cascade.png", policy)
        figure = "cascade.png"
    path = out / "cascade.md"
    path.write_text(render_markdown(cascade_report(policy, held, figure=figure)), encoding="utf-8")
    return path
