"""Writing a calibration run's results: metrics.json, and report.md and report.html from one ``Report``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from judgelab.calibration.analysis import Analysis, stated_warnings, write_criteria_thresholds
from judgelab.calibration.data import AbstainBands, RowCounts, SelfPreferenceRecord, TaskMetrics, write_metrics
from judgelab.calibration.report._agreement_section import agreement_sections
from judgelab.calibration.report._deployment import Deployment, deployment_section, risk_coverage_png
from judgelab.calibration.report._model import Block, Bullets, Figure, Gallery, Paragraph, Report, Section, table_section
from judgelab.calibration.report._render import render_html, render_markdown

__all__ = ["calibration_report", "write_report"]

TITLE = "judgelab calibration report"
_SHOWN = ("balanced_accuracy", "accuracy", "precision", "recall", "f1", "mcc", "cohen_kappa",
          "auroc", "auprc", "brier", "log_loss", "ece", "ece_equal_mass")
_FIG_TITLES = {
    "reliability": "Reliability diagram",
    "roc": "ROC curve",
    "pr": "Precision-recall curve",
    "histogram": "Score histograms by label",
    "threshold": "Threshold vs metric",
}


def _f(x: float | None, spec: str = ".3f") -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return format(x, spec)


def _selfpref_section(sp: SelfPreferenceRecord) -> Section:
    """The self-preference table: pass rates by generator, then the gaps and their p-values."""
    rows = [[s.generator + (" (self)" if s.is_self else ""), str(s.n), _f(s.pass_rate), _f(s.pass_rate_pos), _f(s.pass_rate_neg)]
            for s in sp.by_generator]
    for s in (sp.self, sp.other):
        rows.append([f"**all {s.generator}**", str(s.n), _f(s.pass_rate), _f(s.pass_rate_pos), _f(s.pass_rate_neg)])
    return table_section(
        "Self-preference",
        ["generator", "rows", "pass rate", "P(pass | label 1)", "P(pass | label 0)"],
        rows,
        (f"Self patterns: {', '.join(sp.patterns) or '(none)'}. Gap label 1 (equal opportunity): "
         f"{format(sp.gap_pos, '+.3f')}, p = {_f(sp.p_value_pos, '.3g')}; gap label 0: "
         f"{format(sp.gap_neg, '+.3f')}, p = {_f(sp.p_value_neg, '.3g')}. {sp.message} "
         f"Verdicts at the shipped threshold on all scored rows."),
    )


def _metrics_section(m: TaskMetrics) -> Section:
    """The held-out metrics at the shipped threshold, beside the in-sample ones."""
    t, heldout, in_sample = m.threshold, m.heldout or {}, m.in_sample_at_threshold or {}
    note = {
        "split": "Measured on the test split; threshold, band and calibrators tuned on the dev split.",
        "cv": f"Held-out estimates from {t.note}.",
        "in-sample": f"IN-SAMPLE ({t.note}): these numbers are measured on the rows the threshold was tuned on and are optimistic.",
    }[t.mode or "in-sample"]
    return table_section(
        "Metrics at the shipped threshold (95% bootstrap intervals)",
        ["metric", "held-out", f"all rows, in-sample (threshold {t.value:.3f})"],
        [[k, format(heldout[k]), _f(in_sample.get(k))] for k in _SHOWN if k in heldout],
        note,
    )


def _band_section(bands: AbstainBands) -> Section:
    b, bh = bands.tuned, bands.heldout
    return table_section(
        f"Abstain band (target error {b.target_error:g} among decided rows)",
        ["", "fail below", "pass at or above", "coverage", "error among decided"],
        [["tuning rows", _f(b.low), _f(b.high), _f(b.coverage), _f(b.error)],
         ["held-out", _f(bh.low), _f(bh.high), _f(bh.coverage), _f(bh.error)]],
        ("No band reaches this error target on the tuning rows: every row would be escalated."
         if b.coverage == 0 else
         "Accept when confident, escalate the rows in between to a person or a stronger judge."),
    )


def _task_sections(m: TaskMetrics, undefined: Sequence[str] = ()) -> list[Section]:
    """One task's tables, each a section with its note (a part an older metrics.json lacks is left out)."""
    tables = [_metrics_section(m), *agreement_sections(m)]
    by_group = m.heldout_by_group or {}
    if len(by_group) > 1:
        tables.append(table_section(
            "By group (held-out)",
            ["group", "balanced accuracy", "AUROC", "F1", "ECE"],
            [[g, format(ivs["balanced_accuracy"]), format(ivs["auroc"]), format(ivs["f1"]), format(ivs["ece"])]
             for g, ivs in by_group.items()],
            "",
        ))
    if m.calibration is not None:
        kind = m.shipped_calibrator
        tables.append(table_section(
            "Calibration (held-out)",
            ["calibrator", "rows", "ECE before", "ECE after", "ECE equal-mass before", "after", "Brier before", "after"],
            [[k + (" (shipped)" if k == kind else ""), str(v.n), _f(v.ece_before), _f(v.ece_after),
              _f(v.ece_equal_mass_before), _f(v.ece_equal_mass_after), _f(v.brier_before), _f(v.brier_after)]
             for k, v in m.calibration.items()],
            _calibrator_note(m),
        ))
    if m.abstain_band is not None:
        tables.append(_band_section(m.abstain_band))
    if m.self_preference is not None:
        tables.append(_selfpref_section(m.self_preference))
    if undefined:
        tables.append(table_section(
            "Undefined metrics",
            ["why a metric is n/a on some tuning or held-out rows"],
            [[u] for u in undefined],
            "Small or one-class subsets leave these metrics undefined (nan); they are reported as n/a.",
        ))
    if m.criteria:
        tables.append(table_section(
            "Criteria minimums",
            ["criterion", "minimum", "rows", "positives", "balanced accuracy (in-sample)"],
            [[k, _f(v.minimum), str(v.n), str(v.n_pos), _f(v.balanced_accuracy_in_sample)] for k, v in m.criteria.items()],
            "Written to criteria-thresholds.json for CriteriaJudge.",
        ))
    return tables


def _calibrator_note(m: TaskMetrics) -> str:
    """Which calibrator is shipped and why (``calibrator_choice``)."""
    why = f"Shipped: {m.calibrator_choice.reason}. " if m.calibrator_choice is not None else ""
    kind = m.shipped_calibrator
    if kind == "raw":
        return why + "No calibrator file is written; scores are served as the judge gives them."
    return (why + f"The {kind} calibrator is fitted on the {m.threshold.n_tuning} tuning rows; "
            f"with it, the threshold on calibrated scores is {_f(m.threshold.calibrated_value)}.")


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
            update["policy"] = deployments[t].policy.model_dump(exclude={"created"})
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
