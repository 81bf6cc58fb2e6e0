"""The training report: a loss curve and held-out metrics per epoch against the base model."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

__all__ = ["write_report"]

log = logging.getLogger(__name__)


def _plot_losses(losses: list, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        return False
    steps = [s for s, _ in losses]
    values = [v for _, v in losses]
    window = max(1, len(values) // 20)
    smooth = [sum(values[max(0, i - window + 1):i + 1]) / len(values[max(0, i - window + 1):i + 1])
              for i in range(len(values))]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot(steps, values, alpha=0.3, label="loss per step")
    ax.plot(steps, smooth, label=f"mean of {window} steps")
    ax.axhline(math.log(2), color="grey", linestyle=":", label="ln 2 (chance)")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy over the labels")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _fmt(x: Any) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _metrics_table(evaluations: list[dict[str, Any]]) -> list[str]:
    if not evaluations:
        return ["No held-out rows (heldout = 0)."]
    sources = sorted({s for e in evaluations for s in e["sources"]})
    lines = ["| source | rows | " + " | ".join(f"{e['label']} AUROC | {e['label']} BA@0.5 | {e['label']} best BA"
                                             for e in evaluations) + " |",
             "|---|---|" + "---|---|---|" * len(evaluations)]
    for name in [*sources, "overall"]:
        cells = []
        n = None
        for e in evaluations:
            m = e["overall"] if name == "overall" else e["sources"].get(name, {})
            n = m.get("n", n)
            cells += [_fmt(m.get("auroc")), _fmt(m.get("balanced_accuracy")), _fmt(m.get("best_balanced_accuracy"))]
        lines.append(f"| {name} | {n if n is not None else ''} | " + " | ".join(cells) + " |")
    return lines


def write_report(out: Path, provenance: dict[str, Any], losses: list) -> Path:
    """``out/report.md`` and ``out/loss.png``."""
    plotted = _plot_losses(losses, out / "loss.png") if losses else False
    cfg = provenance["config"]
    counts = provenance["counts"]
    lines = [
        f"# Tuning report: {provenance['spec']} ({provenance['base']} + LoRA)",
        "",
        f"- command: `{provenance['command']}`",
        f"- LoRA rank {cfg['rank']}, alpha {cfg['alpha']}, layers {cfg['layers']}, modules "
        f"{', '.join(cfg['target_modules'])}; lr {cfg['lr']}, batch {cfg['batch']}, epochs {cfg['epochs']}, "
        f"seed {cfg['seed']}",
        f"- {provenance['steps']} steps, {provenance['tokens']:,} training tokens in {provenance['train_seconds']:.0f} s "
        f"({provenance['tokens_per_second']:.0f} tokens/s) on {provenance['machine']}",
        "",
        "## Data",
        "",
        "| source | rows | training pool | trained | held out | skipped (over max_tokens) | chunked |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, c in counts.items():
        lines.append(f"| {name} | {c['rows']} | {c['train_pool']} | {c.get('trained', 0)} | "
                     f"{c['heldout']} | {c.get('skipped_long', 0)} | {c.get('chunked', 0)} |")
    lines += ["", "Held-out rows are whole groups (a document's rows, `meta.pair` edits) never trained on; "
              "`heldout.jsonl` holds all of them, for `judgelab calibrate --set`.", "",
              "## Held-out metrics (base = before training)", "",
              *_metrics_table(provenance["evaluations"]), "",
              "BA@0.5: balanced accuracy at threshold 0.5; best BA: at the best threshold on these rows "
              "(optimistic; calibrate chooses it on a dev split).", ""]
    if plotted:
        lines += ["## Loss", "", "![loss curve](loss.png)", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
