"""The report model and its renderer; every report judgelab writes, rendered from fixed inputs and compared
byte for byte with saved copies.

The calibration report (with its Deployment and Robustness sections), the cascade, jury and tuning
reports are written from fixed, seeded inputs (no model); their markdown and HTML must equal the files
under ``tests/data/reports`` after two substitutions: the temporary folders become ``<TMP>`` and
embedded PNGs become ``<PNG>`` (matplotlib's bytes are not the renderer's business). A change to a
report's text or figures shows here as a diff; to accept one on purpose, rerun with
``JUDGELAB_UPDATE_REPORTS=1`` and review the diff of the saved files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from judgelab.calibration import CalibrationOptions, Interval, ScoreRecord, analyze_run
from judgelab.calibration.pipeline import analyze_records
from judgelab.calibration.report import (
    Bullets,
    Code,
    Facts,
    Figure,
    Gallery,
    Paragraph,
    Report,
    Section,
    calibration_report,
    render_html,
    render_markdown,
    table_section,
    write_report,
)
from judgelab.calibration.robustness import (
    AttackStats,
    ConsistencyStats,
    FenceComparison,
    LabelMassStats,
    TaskStress,
    robustness_section,
    write_robustness_figures,
)
from judgelab.cli import main
from judgelab.tuning import write_tuning_report

SAVED = Path(__file__).parent / "data" / "reports"
UPDATE = os.environ.get("JUDGELAB_UPDATE_REPORTS") == "1"


def _normalised(text: str, tmps: tuple[Path, ...]) -> str:
    for tmp in tmps:
        text = text.replace(str(tmp), "<TMP>")
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:image/png;base64,<PNG>", text)


def _check(name: str, path: Path, *tmps: Path) -> None:
    got = _normalised(path.read_text(encoding="utf-8"), tmps)
    saved = SAVED / name
    if UPDATE:
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(got, encoding="utf-8")
    assert got == saved.read_text(encoding="utf-8"), f"{path.name} differs from {saved}"


def _records(n: int = 240, seed: int = 0) -> list[ScoreRecord]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        y = int(rng.random() < 0.5)
        s = float(np.clip(rng.normal(0.5 + (0.5 if i % 3 else 0.3) * (y - 0.5), 0.18), 0.01, 0.99))
        out.append(ScoreRecord(
            id=f"r{i}", task="fact-check" if i % 3 else "relevancy", label=y, score=s, passed=s >= 0.5,
            group=f"g{i % 3}", generator=["google/gemma-x", "meta/llama"][i % 2], split="dev" if i % 2 else "test",
            model="gemma-3-270m", spec_hash="spec", template_hash="tmpl", evaluator="FactCheckingEvaluator",
            response_chars=int(40 + 200 * rng.random()),
        ))
    for i in range(30):  # a task the judge cannot tell apart (a warning), two rows failed, an odd group
        s = float(rng.random())
        out.append(ScoreRecord(id=f"q{i}", task="qa", label=i % 2, score=None if i < 2 else s,
                               error="ValueError: boom" if i < 2 else None, group="only" if i == 5 else "main",
                               model="gemma-3-270m", spec_hash="spec", template_hash="tmpl", evaluator="QaEvaluator"))
    return out


def _iv(estimate: float, low: float = float("nan"), high: float = float("nan")) -> Interval:
    return Interval(estimate, low, high)


def _attack(key: str, kind: str, flips: float, low: float) -> AttackStats:
    return AttackStats(key=key, family=key.split("@")[0], kind=kind, n=20, n_fail=8, n_pass=9,
                       fail_to_pass=_iv(flips, low, min(1.0, flips + 0.2)), pass_to_fail=_iv(0.0),
                       delta_p=_iv(0.123, 0.05, 0.2), delta_p_fail=_iv(float("nan")), deltas=(0.1, 0.2, -0.05))


def _stress() -> dict[str, TaskStress]:
    fc = TaskStress(
        task="fact-check", evaluator="FactCheckingEvaluator", threshold=0.4321, n_rows=20,
        attacks=[_attack("whitespace@end", "benign", 0.0, 0.0), _attack("inject-polite@end", "injection", 0.625, 0.3),
                 _attack("spoof-evidence@end", "evidence", 0.25, float("nan"))],
        consistency=[ConsistencyStats("noul", 20, _iv(0.21, 0.15, 0.3), {"mean P(Q) + P(not Q) - 1": _iv(0.1, 0.0, 0.2)},
                                      "|P(Q) + P(not Q) - 1| per row")],
        label_mass=LabelMassStats(n=20, low_mass=0.05, quantiles={"p10": 0.04, "p50": 0.3, "p90": 0.8}, n_low=3,
                                  accuracy_low=_iv(0.333, 0.0, 1.0), accuracy_high=_iv(0.75, 0.5, 0.9),
                                  difference=_iv(0.417, -0.2, 0.8)),
        fence=FenceComparison(0.4321, 0.5, _iv(0.7, 0.6, 0.8), _iv(0.72, 0.6, 0.8), _iv(0.4, 0.2, 0.6),
                              _iv(0.1, 0.0, 0.2), _iv(0.3, 0.1, 0.5), ()),
        skipped=["reorder-documents"],
    )
    rel = TaskStress(task="relevancy", evaluator="RelevancyEvaluator", threshold=0.5, n_rows=4,
                     attacks=[_attack("whitespace@end", "benign", float("nan"), float("nan"))], consistency=[])
    return {"fact-check": fc, "relevancy": rel}


@pytest.fixture(scope="module")
def calibration_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("calibration")
    analyze_run(_records(), out, meta={"model": "gemma-3-270m", "set": "synthetic"},
                options=CalibrationOptions(n_resamples=200, self_generators=("*gemma*",)))
    return out


def test_calibration_report_with_deployment(calibration_run):
    _check("calibration.md", calibration_run / "report.md", calibration_run)
    _check("calibration.html", calibration_run / "report.html", calibration_run)


def test_robustness_is_a_section_of_the_one_report(tmp_path):
    """A stress run's Robustness section is rendered with the calibration report, not spliced in after."""
    meta = {"model": "gemma-3-270m", "set": "synthetic"}
    run = analyze_records(_records(), tmp_path, meta=meta,
                          options=CalibrationOptions(n_resamples=200, self_generators=("*gemma*",)))
    pngs = write_robustness_figures(_stress(), tmp_path)
    assert set(pngs) == {"fact-check", "relevancy"} and (tmp_path / "figures" / "fact-check-robustness.png").exists()
    section = robustness_section(_stress(), {t: f"figures/{t}-robustness.png" for t in pngs}, pngs)
    write_report(run.analyses, tmp_path, meta=meta, deployments=run.deployments, sections=[section])
    _check("robustness.md", tmp_path / "report.md", tmp_path)
    _check("robustness.html", tmp_path / "report.html", tmp_path)


def test_robustness_section_alone():
    report = calibration_report({}, sections=[robustness_section(_stress())])
    (SAVED / "robustness-alone.md").write_text(render_markdown(report), encoding="utf-8") if UPDATE else None
    (SAVED / "robustness-alone.html").write_text(render_html(report), encoding="utf-8") if UPDATE else None
    assert render_markdown(report) == (SAVED / "robustness-alone.md").read_text(encoding="utf-8")
    assert render_html(report) == (SAVED / "robustness-alone.html").read_text(encoding="utf-8")


def _stage_runs(tmp_path: Path) -> list[str]:
    rng = np.random.default_rng(1)
    n = 300
    y = rng.integers(0, 2, n)
    gens = rng.choice(["google/gemini-1.5", "acme/other-7b", "smollm-x"], n)
    folders = []
    for k, model in enumerate(("gemma-3-270m", "smollm2-135m")):
        s = np.clip(0.5 + (y - 0.5) * (0.4 + 0.3 * k) + rng.normal(0, 0.2, n), 0.001, 0.999)
        folder = tmp_path / model
        folder.mkdir()
        folder.joinpath("scores.jsonl").write_text("".join(
            ScoreRecord(id=f"r{i}", task="fact-check", label=int(y[i]), score=float(s[i]), passed=bool(s[i] >= 0.5),
                        generator=str(gens[i]), model=model, spec_hash=f"spec-{k}", template_hash=f"tpl-{k}",
                        prompt_tokens=10, row_hash=f"h{i}", evaluator="Scripted").model_dump_json(exclude_none=True) + "\n"
            for i in range(n)), encoding="utf-8")
        folders.append(str(folder))
    return folders


def test_cascade_report(tmp_path, capsys):
    runs = _stage_runs(tmp_path)
    assert main(["cascade", "fit", *runs, "--alpha", "0.15", "--resamples", "200", "--no-plots",
                 "--out", str(tmp_path / "out")]) == 0
    _check("cascade.md", tmp_path / "out" / "cascade.md", tmp_path)


def test_jury_report(tmp_path, capsys):
    runs = _stage_runs(tmp_path)
    assert main(["jury", *runs, "--resamples", "200", "--out", str(tmp_path / "jury")]) == 0
    _check("jury.md", tmp_path / "jury" / "jury.md", tmp_path)
    printed = capsys.readouterr().out
    assert printed.startswith((tmp_path / "jury" / "jury.md").read_text(encoding="utf-8"))


def _provenance(evaluations: list) -> dict:
    return {
        "spec": "gemma-3-270m-judge", "base": "gemma-3-270m", "command": "judgelab tune --set a.jsonl",
        "config": {"rank": 16, "alpha": 32, "layers": "all", "target_modules": ["q_proj", "v_proj"], "lr": 2e-4,
                   "batch": 8, "epochs": 2, "seed": 0},
        "steps": 120, "tokens": 123456, "train_seconds": 301.4, "tokens_per_second": 409.6, "machine": "a test CPU",
        "counts": {"fib": {"rows": 100, "train_pool": 80, "trained": 78, "heldout": 20, "skipped_long": 2},
                   "wice": {"rows": 50, "train_pool": 40, "heldout": 10, "chunked": 5}},
        "evaluations": evaluations,
    }


def test_tuning_report(tmp_path):
    evaluations = [
        {"label": "base", "sources": {"fib": {"n": 20, "auroc": 0.61, "balanced_accuracy": 0.5,
                                              "best_balanced_accuracy": float("nan")}, "wice": {"n": 10}},
         "overall": {"n": 30, "auroc": 0.6, "balanced_accuracy": None, "best_balanced_accuracy": 0.65}},
        {"label": "epoch 1", "sources": {"fib": {"n": 20, "auroc": 0.81, "balanced_accuracy": 0.7,
                                                 "best_balanced_accuracy": 0.75}},
         "overall": {"n": 30, "auroc": 0.8, "balanced_accuracy": 0.7, "best_balanced_accuracy": 0.76}},
    ]
    write_tuning_report(tmp_path, _provenance(evaluations), [(1, 0.9), (2, 0.7), (3, 0.6)])
    _check("tuning.md", tmp_path / "report.md", tmp_path)
    assert (tmp_path / "loss.png").stat().st_size > 1000
    (tmp_path / "none").mkdir()
    write_tuning_report(tmp_path / "none", _provenance([]), [])
    _check("tuning-no-heldout.md", tmp_path / "none" / "report.md", tmp_path)


def test_one_model_renders_to_markdown_and_html():
    report = Report("A <title>", (
        Paragraph("all good", lead="task:", kind="headline"),
        Paragraph("it's `x` & y", lead="Warning (task):", kind="warning"),
        Bullets(("model: `m`",)),
        Section("task", (
            table_section("Numbers", ["name", "value"], [["**all**", "1"], ["b", "2"]], "A note."),
            Facts((("lower / upper", "0.1 / 0.9"),)),
            Gallery((Figure("ROC", "figures/roc.png", b"\x89PNG"), Figure("no file"))),
            Figure("not drawn"),
            Code("# refit\njudgelab policy run"),
        )),
    ))
    assert render_markdown(report) == (
        "# A <title>\n\n**task:** all good\n\n> **Warning (task):** it's `x` & y\n\n- model: `m`\n\n## task\n\n"
        "### Numbers\n\n| name | value |\n|---|---|\n| **all** | 1 |\n| b | 2 |\n\nA note.\n\n"
        "| | |\n|---|---|\n| lower / upper | 0.1 / 0.9 |\n\n![ROC](figures/roc.png)\n\n"
        "```\n# refit\njudgelab policy run\n```\n")
    page = render_html(report)
    assert page.startswith("<!doctype html><html><head><meta charset='utf-8'><title>A &lt;title&gt;</title><style>")
    assert page.endswith("</body></html>\n")
    body = page[page.index("<body>"):]
    assert body == (
        "<body><h1>A &lt;title&gt;</h1><p class='headline'><b>task:</b> all good</p>"
        "<p class='warn'><b>Warning (task):</b> it&#39;s <code>x</code> &amp; y</p><ul><li>model: <code>m</code></li></ul>"
        "<h2>task</h2><h3>Numbers</h3><table><tr><th>name</th><th>value</th></tr><tr><td><b>all</b></td><td>1</td></tr>"
        "<tr><td>b</td><td>2</td></tr></table><p class='note'>A note.</p>"
        "<table><tr><th>lower / upper</th><td>0.1 / 0.9</td></tr></table>"
        "<div class='figs'><figure><img alt='ROC' src='data:image/png;base64,iVBORw=='><figcaption>ROC</figcaption>"
        "</figure></div><pre># refit\njudgelab policy run</pre></body></html>\n")
    section = report.blocks[-1]
    assert render_markdown(section, level=3).startswith("### task\n\n#### Numbers\n")
    assert render_html(section, level=3).startswith("<h3>task</h3><h4>Numbers</h4>")
