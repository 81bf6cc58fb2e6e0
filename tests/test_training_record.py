"""``benchmarks/training_record.py --report``: a retrained judge's report keeps a marker on every measured figure.

A tuning report rendered without markers fails ``test_unmarked_figures`` once it is copied into
``models/NAME/``; the marked one passes it, and each marker reads its figure back from the results file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import training_record  # noqa: E402
from test_published_figures import check_markdown  # noqa: E402
from test_unmarked_figures import unmarked  # noqa: E402

from judgelab.tuning import tuning_report  # noqa: E402

SCORES = {"n": 16, "auroc": 0.8125, "balanced_accuracy": 0.6875, "best_balanced_accuracy": 0.75}


def _provenance() -> dict:
    evaluation = {"sources": {"fib:fib": SCORES, "squad-relevancy:train-v1.1": {**SCORES, "auroc": 0.53125},
                              "halueval-qa:qa_one-turn": {"n": 0, "auroc": float("nan")}},
                  "overall": {**SCORES, "n": 32}}
    return {
        "command": "benchmarks/train_default_judge.py --out runs/x", "spec": "judge", "base": "gemma-3-270m",
        "config": {"rank": 16, "alpha": 32.0, "layers": "top-half", "target_modules": ["q_proj"], "lr": 2e-4,
                   "batch": 8, "epochs": 1, "seed": 0, "split_seed": None},
        "counts": {"fib:fib": {"rows": 10, "train_pool": 8, "heldout": 2, "trained": 8}},
        "steps": 310, "tokens": 498_211, "train_seconds": 1834.46, "tokens_per_second": 271.6,
        "machine": "AMD EPYC, 2 CPUs, Linux",
        "evaluations": [{"label": "initial adapter", **evaluation}, {"label": "epoch 1", **evaluation}],
    }


def _markdown(provenance: dict) -> str:
    from judgelab.calibration.report import render_markdown

    return render_markdown(tuning_report(provenance))


def test_the_marked_report_holds_every_figure_to_its_results_file(tmp_path):
    run, results, model = tmp_path / "run", tmp_path / "results", tmp_path / "models" / "judge"
    run.mkdir()
    (run / "PROVENANCE.json").write_text(json.dumps(_provenance()), encoding="utf-8")
    (run / "losses.json").write_text(json.dumps([[1, 0.7], [2, 0.6], [3, 0.5]]), encoding="utf-8")
    assert training_record.main([str(run), "--results", str(results / "tuning" / "x-training.json"),
                                 "--results-root", str(results), "--report", str(model)]) == 0
    text = (model / "report.md").read_text(encoding="utf-8")
    checked, problems = check_markdown(text, results)
    assert not problems
    assert checked == 4 + 2 * 3 * 3  # steps, tokens, seconds, tokens/s; 3 scores x (2 scored rows + overall) x 2
    assert "tuning/x-training.json training.evaluations.1.sources.squad-relevancy:train-v1.1.auroc" in text
    assert not unmarked(text)
    assert unmarked(_markdown(_provenance()))  # the run folder's own report: the check would fail on it


def test_a_report_needs_its_results_file_under_the_results_root(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "PROVENANCE.json").write_text(json.dumps(_provenance()), encoding="utf-8")
    try:
        training_record.main([str(run), "--results", str(tmp_path / "elsewhere.json"), "--results-root",
                              str(tmp_path / "results"), "--report", str(tmp_path / "model")])
    except SystemExit as exc:
        assert "must lie under" in str(exc)
    else:
        raise AssertionError("a report marked to a file outside the results root was written")
    assert not (tmp_path / "model").exists() and not (tmp_path / "elsewhere.json").exists()
