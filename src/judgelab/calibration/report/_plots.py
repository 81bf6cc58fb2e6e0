"""Report figures as PNG bytes (matplotlib, imported lazily with the Agg backend)."""

from __future__ import annotations

import io
import math
import warnings
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from judgelab.calibration.analysis import calibration_bins, threshold_curve

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from judgelab.calibration.analysis import Analysis

__all__ = ["analysis_figures"]


def _plt() -> ModuleType:
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - a dependency
        from judgelab.errors import JudgelabError

        raise JudgelabError("Report plots need matplotlib: pip install matplotlib") from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def _estimate(a: Analysis, key: str) -> float:
    """A held-out figure's estimate (nan when undefined)."""
    iv = (a.metrics.heldout or {}).get(key)
    return math.nan if iv is None or iv.estimate is None else iv.estimate


def _reliability(a: Analysis) -> bytes:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.5, 4.2))
    ax.plot([0, 1], [0, 1], ls="--", c="grey", lw=1, label="perfect")
    kind = a.metrics.shipped_calibrator
    shown = ((a.plots.s, "raw"),) if kind == "raw" else ((a.plots.s, "raw"), (a.plots.s_cal, f"{kind} (held-out)"))
    for scores, name in shown:
        ok = ~np.isnan(scores)
        if ok.sum() == 0:
            continue
        mp, fp, n = calibration_bins(a.plots.y[ok], scores[ok], n_bins=10)
        ax.plot(mp, fp, marker="o", label=name)
    ax.set(xlabel="mean predicted P(pass)", ylabel="observed pass fraction", xlim=(0, 1), ylim=(0, 1), title="Reliability")
    ax.legend(loc="upper left", fontsize=8)
    return _png(fig)


def _roc_pr(a: Analysis) -> tuple[bytes | None, bytes | None]:
    from sklearn.metrics import precision_recall_curve, roc_curve

    if len(np.unique(a.plots.y)) < 2:
        return None, None
    plt = _plt()
    pred = a.plots.s >= a.metrics.threshold.value
    pos = a.plots.y == 1
    tpr_t = pred[pos].mean()
    fpr_t = pred[~pos].mean()
    prec_t = (a.plots.y[pred] == 1).mean() if pred.any() else np.nan
    fpr, tpr, _ = roc_curve(a.plots.y, a.plots.s)
    fig, ax = plt.subplots(figsize=(4.5, 4.2))
    ax.plot(fpr, tpr, label=f"AUROC {_estimate(a, 'auroc'):.3f}")
    ax.plot([0, 1], [0, 1], ls="--", c="grey", lw=1)
    ax.scatter([fpr_t], [tpr_t], c="red", zorder=3, label=f"threshold {a.metrics.threshold.value:.3f}")
    ax.set(xlabel="false pass rate", ylabel="true pass rate", title="ROC (held-out rows)")
    ax.legend(loc="lower right", fontsize=8)
    roc = _png(fig)
    prec, rec, _ = precision_recall_curve(a.plots.y, a.plots.s)
    fig, ax = plt.subplots(figsize=(4.5, 4.2))
    ax.plot(rec, prec, label=f"AUPRC {_estimate(a, 'auprc'):.3f}")
    ax.axhline(pos.mean(), ls="--", c="grey", lw=1, label="base rate")
    ax.scatter([tpr_t], [prec_t], c="red", zorder=3, label=f"threshold {a.metrics.threshold.value:.3f}")
    ax.set(xlabel="recall", ylabel="precision", ylim=(0, 1.02), title="Precision-recall (held-out rows)")
    ax.legend(loc="lower left", fontsize=8)
    return roc, _png(fig)


def _histogram(a: Analysis) -> bytes:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    bins = np.linspace(0, 1, 26)
    ax.hist(a.plots.s[a.plots.y == 1], bins=bins, alpha=0.6, label="label 1 (should pass)")
    ax.hist(a.plots.s[a.plots.y == 0], bins=bins, alpha=0.6, label="label 0 (should fail)")
    ax.axvline(a.metrics.threshold.value, c="red", lw=1.5, label=f"threshold {a.metrics.threshold.value:.3f}")
    ax.set(xlabel="score", ylabel="rows", title="Scores by label (held-out rows)")
    ax.legend(fontsize=8)
    return _png(fig)


def _threshold_metric(a: Analysis) -> bytes:
    plt = _plt()
    curve = threshold_curve(a.plots.y_tuning, a.plots.s_tuning)
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for name in ("balanced_accuracy", "f1", "precision", "recall"):
        ax.plot(curve["threshold"], curve[name], label=name.replace("_", " "), drawstyle="steps-post")
    ax.axvline(a.metrics.threshold.value, c="red", lw=1.5, ls="--", label=f"chosen {a.metrics.threshold.value:.3f}")
    ax.set(xlabel="threshold", ylabel="metric (tuning rows)", xlim=(0, 1), ylim=(0, 1.02), title="Threshold vs metric")
    ax.legend(fontsize=8)
    return _png(fig)


def analysis_figures(a: Analysis) -> dict[str, bytes]:
    """PNG figures for one task: reliability, roc, pr, histogram, threshold."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figs = {"reliability": _reliability(a)}
        roc, pr = _roc_pr(a)
        if roc is not None and pr is not None:  # both or neither
            figs["roc"], figs["pr"] = roc, pr
        figs["histogram"] = _histogram(a)
        figs["threshold"] = _threshold_metric(a)
    return figs
