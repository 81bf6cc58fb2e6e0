"""Writing a calibration run's results: metrics.json, and report.md and report.html from one ``Report``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from judgelab.calibration.analysis import MEASURES, Analysis, stated_warnings, write_criteria_thresholds
from judgelab.calibration.data import RowCounts, TaskMetrics, write_metrics
from judgelab.calibration.report._deployment import Deployment, deployment_section, risk_coverage_png
from judgelab.calibration.report._model import Block, Bullets, Figure, Gallery, Paragraph, Report, Section, table_section
from judgelab.calibration.report._render import render_html, render_markdown

__all__ = ["calibration_report", "write_report"]

TITLE = "judgelab calibration report"
_FIG_TITLES = {
    "reliability": "Reliability diagram",
    "roc": "ROC curve",
    "pr": "Precision-recall curve",
    "histogram": "Score histograms by label",
    "threshold": "Threshold vs metric",
}


def _task_sections(m: TaskMetrics, undefined: Sequence[str] = ()) -> list[Section]:
    """One task's tables, each a section with its note: every measure's (``MEASURES``, in order; a part an older
    metrics.json lacks is left out), then why a metric was undefined."""
    tables = [table_section(*t) for measure in MEASURES for t in measure.tables(m)]
    if undefined:
        tables.append(table_section(
            "Undefined metrics",
            ["why a metric is n/a on some tuning or held-out rows"],
            [[u] for u in undefined],
            "Small or one-class subsets leave these metrics undefined (nan); they are reported as n/a.",
        ))
    return tables


def write_report(
    analyses: Mapping[str, Analysis],
    out_dir: str | Path,
    *,
    meta: Mapping[str, object] | None = None,
    figures: bool = True,
    deployments: Mapping[str, Deployment] | None = None,
    sections: Sequence[Section] = (),
) -> dict[str, Path]:
    """Write ``metrics.json`` (once), ``report.md``, ``report.html``, calibrators and figures.

    Both reports are rendered from one ``Report`` (``calibration_report``)
    by ``render_markdown`` and ``render_html``.

    Parameters
    ----------
    analyses
        ``{task: Analysis}``.
    out_dir
        Output folder (created).
    meta
        Run facts shown at the top (model, set, command, ...).
    figures
        Draw the matplotlib figures (PNG files under ``figures/`` for the
        markdown, embedded as base64 in the HTML).
    deployments
        ``{task: Deployment}`` (the policies the pipeline fitted and saved): a
        Deployment section per task (policy, risk-coverage plot, commands) at
        the end of both reports, and each task's policy in metrics.json.
    sections
        More sections of the same report, after the Deployment section (the
        Robustness section of a stress run); their figures are theirs to write.

    Returns
    -------
    dict
        Paths written, by kind.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(meta or {})
    written = _write_metrics(analyses, out, meta, deployments or {})
    figs = _write_figures(analyses, out) if figures else {}
    if deployments and figures:
        figs.update(_write_deployment_figures(out, deployments))
    report = calibration_report(analyses, meta=meta, figures=figs, deployments=deployments, sections=sections)
    for kind, name, render in (("report_md", "report.md", render_markdown), ("report_html", "report.html", render_html)):
        (out / name).write_text(render(report), encoding="utf-8")
        written[kind] = out / name
    return written


def _write_deployment_figures(out: Path, deployments: Mapping[str, Deployment]) -> dict[str, dict[str, bytes]]:
    """Each task's risk-coverage figure, under ``figures/``, keyed like the analysis figures."""
    figs: dict[str, dict[str, bytes]] = {}
    for t, dep in deployments.items():
        png = risk_coverage_png(dep)
        (out / "figures").mkdir(exist_ok=True)
        (out / "figures" / f"{t}-risk-coverage.png").write_bytes(png)
        figs[f"deployment:{t}"] = {"risk-coverage": png}
    return figs


def _write_metrics(analyses: Mapping[str, Analysis], out: Path, meta: Mapping[str, object],
                   deployments: Mapping[str, Deployment]) -> dict[str, Path]:
    """metrics.json (each task's figures, its calibrator file and policy), each task's fitted calibrator and
    criteria minimums."""
    written: dict[str, Path] = {}
    tasks: dict[str, TaskMetrics] = {}
    model = meta.get("model")
    for t, a in analyses.items():
        update: dict[str, object] = {}
        if a.calibrator is not None:
            written[f"calibrator-{t}"] = a.calibrator.save(out / f"calibrator-{t}.json")
            update["calibrator_file"] = written[f"calibrator-{t}"].name
        else:  # raw scores shipped: a calibrator file from an earlier run must not be picked up
            (out / f"calibrator-{t}.json").unlink(missing_ok=True)
        if t in deployments:  # the creation time lives in policy.json: metrics.json stays identical on a rerun
            update["policy"] = deployments[t].policy
        criteria = a.metrics.criteria
        if criteria:
            written[f"criteria-{t}"] = write_criteria_thresholds(
                {k: v.model_dump() for k, v in criteria.items()}, out / f"criteria-thresholds-{t}.json",
                model=model if isinstance(model, str) else None, strategy=a.metrics.threshold.strategy,
            )
        tasks[t] = a.metrics.model_copy(update=update) if update else a.metrics
    written["metrics"] = write_metrics({"meta": dict(meta), "tasks": tasks}, out / "metrics.json")
    return written


def _write_figures(analyses: Mapping[str, Analysis], out: Path) -> dict[str, dict[str, bytes]]:
    """PNG figures per task, also written under ``figures/`` for the markdown report."""
    from judgelab.calibration.report._plots import analysis_figures

    figs: dict[str, dict[str, bytes]] = {}
    for t, a in analyses.items():
        figs[t] = analysis_figures(a)
        (out / "figures").mkdir(exist_ok=True)
        for name, png in figs[t].items():
            (out / "figures" / f"{t}-{name}.png").write_bytes(png)
    return figs


def calibration_report(
    analyses: Mapping[str, Analysis],
    *,
    meta: Mapping[str, object] | None = None,
    figures: Mapping[str, Mapping[str, bytes]] | None = None,
    deployments: Mapping[str, Deployment] | None = None,
    sections: Sequence[Section] = (),
) -> Report:
    """The calibration report: per task its headline and warnings, the run facts, then per task its
    tables and figures, then the Deployment section.

    Parameters
    ----------
    analyses
        ``{task: Analysis}``.
    meta
        Run facts (model, set, command, ...).
    figures
        ``{task: {figure name: PNG}}`` (``analysis_figures``), and ``{"deployment:TASK": {"risk-coverage":
        PNG}}``; a figure is linked from ``figures/TASK-NAME.png`` in markdown.
    deployments
        ``{task: Deployment}``.
    sections
        More sections, last (a stress run's Robustness section).

    Returns
    -------
    Report
    """
    figures = figures or {}
    blocks: list[Block] = []
    for t, a in analyses.items():
        blocks.append(Paragraph(a.metrics.headline or "", lead=f"{t}:", kind="headline"))
        blocks += [Paragraph(w, lead=f"Warning ({t}):", kind="warning") for w in stated_warnings(a.metrics)]
    if meta:
        blocks.append(Bullets(tuple(f"{k}: `{v}`" for k, v in meta.items())))
    for t, a in analyses.items():
        gallery = Gallery(tuple(Figure(_FIG_TITLES[name], f"figures/{t}-{name}.png", png)
                                for name, png in figures.get(t, {}).items()))
        blocks.append(Section(t, (_rows_paragraph(a.metrics), *_task_sections(a.metrics, a.undefined_metrics), gallery)))
    if deployments:
        blocks.append(Section("Deployment", tuple(
            deployment_section(dep, png=figures.get(f"deployment:{t}", {}).get("risk-coverage"),
                               figure=f"figures/{t}-risk-coverage.png" if f"deployment:{t}" in figures else None)
            for t, dep in deployments.items())))
    return Report(TITLE, (*blocks, *sections))


def _rows_paragraph(m: TaskMetrics) -> Paragraph:
    """How many rows were scored, and the threshold strategy."""
    rows = m.rows or RowCounts(total=0, scored=0, errors=0)
    failed = f"; {rows.errors} failed and are left out (see the 'error' field in scores.jsonl)" if rows.errors else ""
    return Paragraph(f"{rows.scored} of {rows.total} rows scored{failed}. Threshold strategy `{m.threshold.strategy}`.")
