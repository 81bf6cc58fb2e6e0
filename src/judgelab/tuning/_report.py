"""The training report: a loss curve and held-out metrics per epoch against the base model, as a ``Report``."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.calibration.report import Block, Bullets, Figure, Paragraph, Report, Section, Table, render_markdown

if TYPE_CHECKING:
    from judgelab.tuning._evaluate import HeldoutEvaluation

__all__ = ["FigureMarks", "tuning_report", "write_report"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FigureMarks:
    """Where a report's measured figures are kept, so each gets the docs' figure marker.

    ``file`` is a results file (relative to ``benchmarks/results/``) that holds the run's provenance under
    ``prefix`` (``benchmarks/training_record.py`` writes it under ``training``). A figure is rendered as
    ``0.875<!-- fig FILE PREFIX.KEY -->``, which ``tests/test_published_figures.py`` holds to the file.
    """

    file: str
    prefix: str = ""

    def __call__(self, text: str, key: str) -> str:
        if text == "n/a":
            return text
        return f"{text}<!-- fig {self.file} {self.prefix + '.' if self.prefix else ''}{key} -->"


def _unmarked(text: str, key: str) -> str:
    return text


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


def _metrics_block(evaluations: Sequence[HeldoutEvaluation], mark: Callable[[str, str], str] = _unmarked) -> Block:
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
        for i, e in enumerate(evaluations):
            m = e["overall"] if name == "overall" else e["sources"].get(name, {})
            where = f"evaluations.{i}." + ("overall" if name == "overall" else f"sources.{name}")
            n = m.get("n", n)
            cells += [mark(_fmt(m.get(k)), f"{where}.{k}") for k in ("auroc", "balanced_accuracy",
                                                                     "best_balanced_accuracy")]
        rows.append((name, str(n) if n is not None else "", *cells))
    return Table(tuple(header), tuple(rows))


def tuning_report(provenance: dict[str, Any], *, loss_figure: str | None = None,
                  marks: FigureMarks | None = None) -> Report:
    """The training report of one run, from its provenance.

    Parameters
    ----------
    provenance
        What ``provenance.json`` holds: spec, base, command, config, steps, tokens, timing, machine,
        row counts per source, held-out evaluations.
    loss_figure
        The loss plot's path for markdown (``loss.png``); None: no plot.
    marks
        The results file that keeps this provenance: every measured figure gets its marker. None: no
        markers (a run folder's own report).

    Returns
    -------
    Report
    """
    cfg = provenance["config"]
    mark: Callable[[str, str], str] = marks or _unmarked
    blocks: list[Block] = [
        Bullets((
            f"command: `{provenance['command']}`",
            f"LoRA rank {cfg['rank']}, alpha {cfg['alpha']}, layers {cfg['layers']}, modules "
            f"{', '.join(cfg['target_modules'])}; lr `{cfg['lr']}`, batch {cfg['batch']}, epochs {cfg['epochs']}, "
            f"seed {cfg['seed']}" + ("" if cfg.get("split_seed") is None else f", held-out split seed {cfg['split_seed']}"),
            f"{mark(str(provenance['steps']), 'steps')} steps, {mark(format(provenance['tokens'], ','), 'tokens')} "
            f"training tokens in {mark(format(provenance['train_seconds'], '.0f'), 'train_seconds')} s "
            f"({mark(format(provenance['tokens_per_second'], '.0f'), 'tokens_per_second')} tokens/s) on "
            f"{provenance['machine']}",
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
            _metrics_block(provenance["evaluations"], mark),
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


def write_report(out: Path, provenance: dict[str, Any], losses: Sequence[tuple[int, float]], *,
                 marks: FigureMarks | None = None) -> Path:
    """``out/report.md`` and ``out/loss.png``; with ``marks``, every measured figure carries its marker."""
    plotted = _plot_losses(losses, out / "loss.png") if losses else False
    path = out / "report.md"
    report = tuning_report(provenance, loss_figure="loss.png" if plotted else None, marks=marks)
    path.write_text(render_markdown(report), encoding="utf-8")
    return path
