"""The training report: a loss curve and held-out metrics per epoch against the base model, as a ``Report``."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.calibration.report import Block, Bullets, Figure, Paragraph, Report, Section, Table, render_markdown

if TYPE_CHECKING:
    from judgelab.tuning._evaluate import HeldoutEvaluation

__all__ = ["tuning_report", "write_report"]

log = logging.getLogger(__name__)


def _plot_losses(losses: Sequence[tuple[int, float]], path: Path) -> bool:
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


def _fmt(x: object) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _metrics_block(evaluations: Sequence[HeldoutEvaluation]) -> Block:
    """Held-out AUROC and balanced accuracy per source and overall, one column group per evaluation."""
    if not evaluations:
        return Paragraph("No held-out rows (heldout = 0).")
    sources = sorted({s for e in evaluations for s in e["sources"]})
    header = ["source", "rows"]
    for e in evaluations:
        header += [f"{e['label']} AUROC", f"{e['label']} BA@0.5", f"{e['label']} best BA"]
    rows = []
    for name in [*sources, "overall"]:
        cells = []
        n = None
        for e in evaluations:
            m = e["overall"] if name == "overall" else e["sources"].get(name, {})
            n = m.get("n", n)
            cells += [_fmt(m.get("auroc")), _fmt(m.get("balanced_accuracy")), _fmt(m.get("best_balanced_accuracy"))]
        rows.append((name, str(n) if n is not None else "", *cells))
    return Table(tuple(header), tuple(rows))


def tuning_report(provenance: dict[str, Any], *, loss_figure: str | None = None) -> Report:
    """The training report of one run, from its provenance.

    Parameters
    ----------
    provenance
        What ``provenance.json`` holds: spec, base, command, config, steps, tokens, timing, machine,
        row counts per source, held-out evaluations.
    loss_figure
        The loss plot's path for markdown (``loss.png``); None: no plot.

    Returns
    -------
    Report
    """
    cfg = provenance["config"]
    blocks: list[Block] = [
        Bullets((
            f"command: `{provenance['command']}`",
            f"LoRA rank {cfg['rank']}, alpha {cfg['alpha']}, layers {cfg['layers']}, modules "
            f"{', '.join(cfg['target_modules'])}; lr {cfg['lr']}, batch {cfg['batch']}, epochs {cfg['epochs']}, "
            f"seed {cfg['seed']}" + ("" if cfg.get("split_seed") is None else f", held-out split seed {cfg['split_seed']}"),
            f"{provenance['steps']} steps, {provenance['tokens']:,} training tokens in {provenance['train_seconds']:.0f} s "
            f"({provenance['tokens_per_second']:.0f} tokens/s) on {provenance['machine']}",
        )),
        Section("Data", (
            Table(("source", "rows", "excluded", "training pool", "dropped (overlap held-out)", "trained", "held out",
                   "skipped (over max_tokens)", "chunked"),
                  tuple((name, str(c["rows"]), _excluded(c.get("excluded")), str(c["train_pool"]),
                         str(c.get("dropped_overlapping_heldout", 0)), str(c.get("trained", 0)), str(c["heldout"]),
                         str(c.get("skipped_long", 0)), str(c.get("chunked", 0)))
                        for name, c in provenance["counts"].items())),
            Paragraph("Excluded: rows read from a set that overlap a row of the `exclude` sets (by kind: row, "
                      "document, claim, sentence, near-duplicate), dropped before any deletion pair is built. "
                      "Held-out rows are whole units (a document's rows, `meta.pair` edits, a deletion pair with "
                      "its parent) never trained on, and training rows that share text with any held-out row are "
                      "dropped; `heldout.jsonl` holds all of them, for `judgelab calibrate --set`."),
        )),
        Section("Held-out metrics (base = before training)", (
            _metrics_block(provenance["evaluations"]),
            Paragraph("BA@0.5: balanced accuracy at threshold 0.5; best BA: at the best threshold on these rows "
                      "(optimistic; calibrate chooses it on a dev split)."),
        )),
    ]
    if loss_figure:
        blocks.append(Section("Loss", (Figure("loss curve", loss_figure),)))
    return Report(f"Tuning report: {provenance['spec']} ({provenance['base']} + LoRA)", tuple(blocks))


def _excluded(by_kind: dict[str, int] | None) -> str:
    if not by_kind:
        return "0"
    return f"{sum(by_kind.values())} (" + ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())) + ")"


def write_report(out: Path, provenance: dict[str, Any], losses: Sequence[tuple[int, float]]) -> Path:
    """``out/report.md`` and ``out/loss.png``."""
    plotted = _plot_losses(losses, out / "loss.png") if losses else False
    path = out / "report.md"
    path.write_text(render_markdown(tuning_report(provenance, loss_figure="loss.png" if plotted else None)),
                    encoding="utf-8")
    return path
