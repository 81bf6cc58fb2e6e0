"""The bench's figures as PNG bytes: ROC curves per column, the forest plot, quality against speed.

matplotlib is imported lazily with the Agg backend, as the calibration report's figures are.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from judgelab.bench._measure import CellScores
from judgelab.bench._records import MEAN_COLUMN, Leaderboard

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["forest_png", "roc_png", "speed_png"]


def _plt():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def _roc(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-s, kind="mergesort")
    ys = y[order]
    tps, fps = np.cumsum(ys), np.cumsum(1 - ys)
    p, n = max(int(ys.sum()), 1), max(int(len(ys) - ys.sum()), 1)
    return np.r_[0.0, fps / n], np.r_[0.0, tps / p]


def roc_png(column: str, cells: Sequence[CellScores]) -> bytes | None:
    """ROC curves of every judge with scores on one column's test rows."""
    shown = [c for c in cells if c.ids("test")]
    if not shown:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.8, 4.4))
    ax.plot([0, 1], [0, 1], ls="--", c="grey", lw=1)
    for c in shown:
        ids = c.ids("test")
        labels = {r.id: int(r.label) for r in c.bench_set.by_task[c.task]}
        y = np.array([labels[i] for i in ids], dtype=int)
        if len(set(y.tolist())) < 2:
            continue
        fpr, tpr = _roc(y, np.array([c.scores[i] for i in ids], dtype=float))
        ax.plot(fpr, tpr, lw=1.5, label=c.judge)
    ax.set(xlabel="false positive rate", ylabel="true positive rate", title=f"ROC: {column}")
    ax.legend(fontsize=7, loc="lower right")
    return _png(fig)


def forest_png(board: Leaderboard) -> bytes | None:
    """Each judge's paired difference from the best, per column and for the mean, with its interval."""
    rows = [(r.column, e) for r in board.rankings for e in r.entries if not e.best]
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 0.35 * len(rows) + 1.2))
    for k, (column, e) in enumerate(reversed(rows)):
        d = e.difference
        est = math.nan if d.estimate is None else d.estimate
        color = "tab:blue" if column == MEAN_COLUMN else "tab:grey"
        if d.low is not None and d.high is not None:
            ax.plot([d.low, d.high], [k, k], c=color, lw=2)
        ax.plot([est], [k], "o", c=color)
    ax.axvline(0, c="black", lw=1)
    ax.set_yticks(range(len(rows)), [f"{e.judge} | {c}" for c, e in reversed(rows)], fontsize=7)
    ax.set(xlabel=f"{board.metric} minus the best judge's (95% paired bootstrap)", title="Paired difference from the best")
    return _png(fig)


def speed_png(board: Leaderboard) -> bytes | None:
    """Each judge's mean figure over sets against its judgments per second on this machine."""
    mean = next((r for r in board.rankings if r.column == MEAN_COLUMN), None)
    speed = {c.judge: c.judgments_per_second for c in board.costs}
    points = [(e.judge, e.value, speed.get(e.judge)) for e in (mean.entries if mean else ())]
    points = [(j, v, s) for j, v, s in points if v is not None and s]
    if not points:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    for j, v, s in points:
        ax.plot([s], [v], "o")
        ax.annotate(j, (s, v), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.set_xscale("log")
    ax.set(xlabel=f"judgments per second ({board.machine.get('cpu', 'this machine')})",
           ylabel=f"{board.metric}, {MEAN_COLUMN}", title="Quality against speed")
    return _png(fig)
