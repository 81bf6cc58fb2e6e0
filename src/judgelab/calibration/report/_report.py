"""Writing a calibration run's results: metrics.json, report.md, report.html."""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgelab.calibration.analysis import Analysis
from judgelab.calibration.data import read_metrics, write_metrics
from judgelab.calibration.analysis import write_criteria_thresholds
from judgelab.calibration.report._agreement_section import agreement_tables

__all__ = ["write_report"]

_SHOWN = ("balanced_accuracy", "accuracy", "precision", "recall", "f1", "mcc", "cohen_kappa",
          "auroc", "auprc", "brier", "log_loss", "ece", "ece_equal_mass")
_FIG_TITLES = {
    "reliability": "Reliability diagram",
    "roc": "ROC curve",
    "pr": "Precision-recall curve",
    "histogram": "Score histograms by label",
    "threshold": "Threshold vs metric",
}


def _f(x: Any, spec: str = ".3f") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return format(x, spec)


def _selfpref_section(sp: Any) -> tuple[str, list[str], list[list[str]], str]:
    """The self-preference table: pass rates by generator, then the gaps and their p-values."""
    rows = [[s.generator + (" (self)" if s.is_self else ""), str(s.n), _f(s.pass_rate), _f(s.pass_rate_pos), _f(s.pass_rate_neg)]
            for s in sp.by_generator]
    for s in (sp.self_stats, sp.other_stats):
        rows.append([f"**all {s.generator}**", str(s.n), _f(s.pass_rate), _f(s.pass_rate_pos), _f(s.pass_rate_neg)])
    return (
        "Self-preference",
        ["generator", "rows", "pass rate", "P(pass | label 1)", "P(pass | label 0)"],
        rows,
        (f"Self patterns: {', '.join(sp.patterns) or '(none)'}. Gap label 1 (equal opportunity): "
         f"{format(sp.gap_pos, '+.3f')}, p = {_f(sp.p_value_pos, '.3g')}; gap label 0: "
         f"{format(sp.gap_neg, '+.3f')}, p = {_f(sp.p_value_neg, '.3g')}. {sp.message} "
         f"Verdicts at the shipped threshold on all scored rows."),
    )


def _task_sections(a: Analysis) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, header, rows, note) tables for one task."""
    tables = []
    note = {
        "split": "Measured on the test split; threshold, band and calibrators tuned on the dev split.",
        "cv": f"Held-out estimates from {a.mode_note}.",
        "in-sample": f"IN-SAMPLE ({a.mode_note}): these numbers are measured on the rows the threshold was tuned on and are optimistic.",
    }[a.mode]
    tables.append((
        "Metrics at the shipped threshold (95% bootstrap intervals)",
        ["metric", "held-out", f"all rows, in-sample (threshold {a.threshold:.3f})"],
        [[k, format(a.heldout[k]), _f(a.in_sample.get(k))] for k in _SHOWN if k in a.heldout],
        note,
    ))
    tables += agreement_tables(a)
    if len(a.heldout_by_group) > 1:
        tables.append((
            "By group (held-out)",
            ["group", "balanced accuracy", "AUROC", "F1", "ECE"],
            [[g, format(m["balanced_accuracy"]), format(m["auroc"]), format(m["f1"]), format(m["ece"])]
             for g, m in a.heldout_by_group.items()],
            "",
        ))
    tables.append((
        "Calibration (held-out)",
        ["calibrator", "rows", "ECE before", "ECE after", "ECE equal-mass before", "after", "Brier before", "after"],
        [[k + (" (shipped)" if k == a.calibrator_kind else ""), str(v.get("n")), _f(v["ece_before"]), _f(v["ece_after"]),
          _f(v["ece_equal_mass_before"]), _f(v["ece_equal_mass_after"]), _f(v["brier_before"]), _f(v["brier_after"])]
         for k, v in a.calibration.items()],
        _calibrator_note(a),
    ))
    b, bh = a.abstain, a.abstain_heldout
    tables.append((
        f"Abstain band (target error {b.target_error:g} among decided rows)",
        ["", "fail below", "pass at or above", "coverage", "error among decided"],
        [["tuning rows", _f(b.low), _f(b.high), _f(b.coverage), _f(b.error)],
         ["held-out", _f(bh.low), _f(bh.high), _f(bh.coverage), _f(bh.error)]],
        ("No band reaches this error target on the tuning rows: every row would be escalated."
         if b.coverage == 0 else
         "Accept when confident, escalate the rows in between to a person or a stronger judge."),
    ))
    if a.self_pref is not None:
        tables.append(_selfpref_section(a.self_pref))
    if a.undefined_metrics:
        tables.append((
            "Undefined metrics",
            ["why a metric is n/a on some tuning or held-out rows"],
            [[m] for m in a.undefined_metrics],
            "Small or one-class subsets leave these metrics undefined (nan); they are reported as n/a.",
        ))
    if a.criteria:
        tables.append((
            "Criteria minimums",
            ["criterion", "minimum", "rows", "positives", "balanced accuracy (in-sample)"],
            [[k, _f(v["minimum"]), str(v["n"]), str(v["n_pos"]), _f(v["balanced_accuracy_in_sample"])] for k, v in a.criteria.items()],
            "Written to criteria-thresholds.json for CriteriaJudge.",
        ))
    return tables


def _calibrator_note(a: "Analysis") -> str:
    """Which calibrator is shipped and why (``Analysis.calibrator_choice``)."""
    why = f"Shipped: {a.calibrator_choice.reason}. " if a.calibrator_choice is not None else ""
    if a.calibrator_kind == "raw":
        return why + "No calibrator file is written; scores are served as the judge gives them."
    return (why + f"The {a.calibrator_kind} calibrator is fitted on the {a.n_tuning} tuning rows; "
            f"with it, the threshold on calibrated scores is {_f(a.threshold_calibrated)}.")


def write_report(
    analyses: Mapping[str, Analysis],
    out_dir: str | Path,
    *,
    meta: Mapping[str, Any] | None = None,
    figures: bool = True,
    deployments: Mapping[str, Any] | None = None,
) -> dict[str, Path]:
    """Write ``metrics.json``, ``report.md``, ``report.html``, calibrators and figures.

    Both reports are rendered from one data structure (``report_data``)
    through the Jinja templates in ``calibration/report/templates``.

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
        ``{task: Deployment}`` (``_deployment.deployment_for``): a Deployment
        section per task (policy, risk-coverage plot, commands) at the end of
        both reports, and the policy in metrics.json.

    Returns
    -------
    dict
        Paths written, by kind.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(meta or {})
    written = _write_metrics(analyses, out, meta)
    figs = _write_figures(analyses, out) if figures else {}
    data = report_data(analyses, meta, figs)
    for kind, name in (("report_md", "report.md"), ("report_html", "report.html")):
        (out / name).write_text(_render(name, data), encoding="utf-8")
        written[kind] = out / name
    if deployments:
        _append_deployments(out, deployments, figures)
    return written


def _append_deployments(out: Path, deployments: Mapping[str, Any], figures: bool) -> None:
    """Add each task's Deployment section to both reports and its policy to metrics.json."""
    from judgelab.calibration.report._deployment import deployment_html, deployment_markdown, risk_coverage_png

    md, body = [], []
    for t, dep in deployments.items():
        fig, b64 = None, None
        if figures:
            png = risk_coverage_png(dep)
            (out / "figures").mkdir(exist_ok=True)
            (out / "figures" / f"{t}-risk-coverage.png").write_bytes(png)
            fig, b64 = f"figures/{t}-risk-coverage.png", base64.b64encode(png).decode("ascii")
        md += deployment_markdown(dep, fig)
        body.append(deployment_html(dep, b64))
    report_md = out / "report.md"
    report_md.write_text(report_md.read_text(encoding="utf-8").rstrip("\n") + "\n\n## Deployment\n\n"
                         + "\n".join(md) + "\n", encoding="utf-8")
    report_html = out / "report.html"
    doc = report_html.read_text(encoding="utf-8")
    section = "<h2>Deployment</h2>" + "".join(body)
    doc = doc.replace("</body>", section + "</body>", 1) if "</body>" in doc else doc + section
    report_html.write_text(doc, encoding="utf-8")
    metrics = read_metrics(out / "metrics.json").model_dump(exclude_unset=True)
    for t, dep in deployments.items():
        # the creation time lives in policy.json: metrics.json stays identical on a rerun
        metrics["tasks"].setdefault(t, {})["policy"] = dep.policy.model_dump(exclude={"created"})
    write_metrics(metrics, out / "metrics.json")


def _write_metrics(analyses: Mapping[str, Analysis], out: Path, meta: Mapping[str, Any]) -> dict[str, Path]:
    """metrics.json, each task's fitted calibrator and criteria minimums."""
    written: dict[str, Path] = {}
    metrics = {"meta": dict(meta), "tasks": {t: a.to_dict() for t, a in analyses.items()}}
    for t, a in analyses.items():
        if a.calibrator is not None:
            written[f"calibrator-{t}"] = a.calibrator.save(out / f"calibrator-{t}.json")
            metrics["tasks"][t]["calibrator_file"] = written[f"calibrator-{t}"].name
        else:  # raw scores shipped: a calibrator file from an earlier run must not be picked up
            (out / f"calibrator-{t}.json").unlink(missing_ok=True)
        if a.criteria:
            written[f"criteria-{t}"] = write_criteria_thresholds(
                a.criteria, out / f"criteria-thresholds-{t}.json", model=meta.get("model"), strategy=a.strategy
            )
    written["metrics"] = write_metrics(metrics, out / "metrics.json")
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


def report_data(
    analyses: Mapping[str, Analysis], meta: Mapping[str, Any], figs: Mapping[str, Mapping[str, bytes]]
) -> dict[str, Any]:
    """What both reports show: the run facts, then per task its headline, warnings, tables and figures."""
    tasks = []
    for t, a in analyses.items():
        tasks.append({
            "name": t,
            "headline": a.headline(),
            "warnings": a.warnings(),
            "n_scored": a.n_scored,
            "n_rows": a.n_rows,
            "n_errors": a.n_errors,
            "strategy": a.strategy,
            "sections": [{"title": title, "header": header, "rows": rows, "note": note}
                         for title, header, rows, note in _task_sections(a)],
            "figures": [{"name": name, "title": _FIG_TITLES[name], "b64": base64.b64encode(png).decode("ascii")}
                        for name, png in figs.get(t, {}).items()],
        })
    return {"tasks": tasks, "meta": [(str(k), str(v)) for k, v in meta.items()], "style": _STYLE}


_STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:14px}"
          ".headline{font-size:1.15em;background:#eef6ee;padding:.6em}.warn{background:#fdecea;padding:.6em}"
          ".note{color:#555;font-size:.9em}.figs{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}")


def _render(name: str, data: Mapping[str, Any]) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("judgelab.calibration.report", "templates"),
        autoescape=name.endswith(".html"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template(name + ".j2").render(**data)
