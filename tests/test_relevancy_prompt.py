"""The judge's own relevancy prompt: the one the benchmark chose, and the base spec training renders with.

``benchmarks/relevancy_templates.py`` chose the prompt that ``models/gemma-3-270m-judge.toml`` ships
(docs/tuning.md, "Relevancy as a claim"); ``train_default_judge.py --judge-relevancy-prompt`` writes
a base spec that carries it, so that training renders relevancy rows as the judge will be asked.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from judgelab.calibration import LabelledRow
from judgelab.evaluators import RelevancyEvaluator, evaluator_config
from judgelab.specs import load_spec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import relevancy_templates  # noqa: E402
import train_default_judge  # noqa: E402


def test_the_shipped_relevancy_prompt_is_the_one_the_benchmark_chose():
    templates = relevancy_templates.TEMPLATES
    shipped = load_spec("gemma-3-270m-judge").tasks["relevancy"].template
    # Editing either without the other ships a prompt no results file measured: rerun the benchmark.
    assert shipped == templates["claim-answer-is"]
    for template in templates.values():  # every candidate is a valid relevancy template
        assert RelevancyEvaluator.config_for(prompt_template=template).template == template


def _row(unit: str, label: int, kind: str) -> LabelledRow:
    return LabelledRow(id=f"{unit}-{kind}", task="relevancy", user_text="q?", documents=["d."], response="r",
                       label=label, meta={"pair": unit, "kind": kind})


def test_the_sample_keeps_units_whole_and_spreads_over_the_file():
    mod = relevancy_templates
    rows = [_row(f"u{i}", label, kind) for i in range(10) for label, kind in ((1, "on-topic"), (0, "off-topic"))]
    sample = mod._sample(rows, 3)
    units = [r.unit for r in sample]
    assert sorted(set(units)) == ["u0", "u3", "u6"]  # every third unit of ten, from the first
    assert all(units.count(u) == 2 for u in set(units))  # whole units


def test_auroc_by_kind_pits_the_answers_against_one_kind_at_a_time():
    mod = relevancy_templates
    rows = [_row("a", 1, "on-topic"), _row("b", 1, "on-topic"), _row("a", 0, "off-topic"), _row("b", 0, "off-topic"),
            _row("a", 0, "different-question"), _row("b", 0, "different-question")]
    y = np.array([r.label for r in rows])
    s = np.array([0.9, 0.8, 0.1, 0.2, 0.95, 0.85])  # off-topic ranked below, the neighbours above half the answers
    assert mod._by_kind(rows, y, s) == {"different-question": 0.25, "off-topic": 1.0}


def test_the_training_base_spec_carries_the_judges_relevancy_prompt(tmp_path):
    mod = train_default_judge
    args = mod.parser().parse_args(["--out", str(tmp_path / "run"), "--judge-relevancy-prompt"])
    path = Path(mod.base_model(args))
    assert path == (tmp_path / "run.base.toml").resolve()
    base, judge = load_spec(str(path)), load_spec("gemma-3-270m-judge")
    assert base.id == "gemma-3-270m" and base.tasks["relevancy"].template == judge.tasks["relevancy"].template
    # training renders relevancy rows with the evaluator the base gets by name: the judge's prompt
    assert evaluator_config(None, base, task="relevancy").template == judge.tasks["relevancy"].template
    first = path.read_text(encoding="utf-8")
    assert Path(mod.base_model(args)).read_text(encoding="utf-8") == first  # the same command resumes the same file
    without = mod.parser().parse_args(["--out", str(tmp_path / "plain")])
    assert mod.base_model(without) == "gemma-3-270m" and not (tmp_path / "plain.base.toml").exists()


def test_the_two_squad_sources_are_not_trained_together(tmp_path):
    # their rows share paragraphs, and each draws its own held-out units: one's training rows would hold
    # the other's held-out paragraphs
    with pytest.raises(SystemExit, match="--squad and --squad-same read the same SQuAD paragraphs"):
        train_default_judge.main(["--out", str(tmp_path / "run"), "--squad", "10", "--squad-same", "10"])
    args = train_default_judge.parser().parse_args(["--squad-same", "300", "--scale", "1"])
    used = {name: (spec, rows) for name, spec, rows in train_default_judge.used_sources(args)}
    assert used["squad_same"] == ("squad-same-paragraph:{squad}", 300) and "squad" not in used
    train_default_judge.check_licences(args)  # SQuAD's licence covers its same-paragraph rows
