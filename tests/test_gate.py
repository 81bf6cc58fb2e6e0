"""``judgelab gate``: exit 1 on a real drop, a changed template or a shifted label mix; 0 on a re-run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.cli import main


def _write(path, *, n=400, flip=0.0, template="tmpl-a", prefix="r", p1=0.5, seed=0):
    """A scored run: label-1 scores Beta(3, 1.5), label-0 Beta(1.5, 3); ``flip`` of the rows get 1 - score."""
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            y = int(rng.random() < p1)
            s = float(rng.beta(3, 1.5) if y else rng.beta(1.5, 3))
            if rng.random() < flip:
                s = 1 - s
            fh.write(json.dumps({"id": f"{prefix}{i}", "task": "fact-check", "label": y, "score": s,
                                 "spec_hash": "spec-a", "template_hash": template, "model": "gemma-3-270m",
                                 "evaluator": "FactCheckingEvaluator"}) + "\n")
    return path


@pytest.fixture
def baseline(tmp_path):
    return _write(tmp_path / "base" / "scores.jsonl")


def test_rerun_of_the_same_set_passes(baseline, tmp_path, capsys):
    again = _write(tmp_path / "again" / "scores.jsonl")
    assert main(["gate", str(baseline.parent), "--set", str(again)]) == 0
    out = capsys.readouterr().out
    assert "ok" in out and "paired on 400 shared rows" in out


def test_planted_accuracy_drop_fails(baseline, tmp_path, capsys):
    worse = _write(tmp_path / "worse.jsonl", flip=0.3)  # same rows, 30% of scores turned around
    assert main(["gate", str(baseline), "--set", str(worse)]) == 1
    line = capsys.readouterr().out.strip()
    assert line.startswith("judgelab gate: FAIL: balanced_accuracy dropped") and "\n" not in line
    # the same drop within a generous allowance passes
    assert main(["gate", str(baseline), "--set", str(worse), "--max-drop", "0.5"]) == 0


def test_unpaired_drop_fails_on_new_rows(baseline, tmp_path, capsys):
    worse = _write(tmp_path / "new.jsonl", flip=0.3, prefix="n", seed=1)
    assert main(["gate", str(baseline), "--set", str(worse)]) == 1
    assert "unpaired" in capsys.readouterr().out


def test_changed_template_fails(baseline, tmp_path, capsys):
    other = _write(tmp_path / "tmpl.jsonl", template="tmpl-b")
    assert main(["gate", str(baseline), "--set", str(other)]) == 1
    out = capsys.readouterr().out
    assert "template changed" in out and "tmpl-a" in out and "tmpl-b" in out


def test_shifted_label_mix_fails(baseline, tmp_path, capsys):
    shifted = _write(tmp_path / "mix.jsonl", p1=0.8, prefix="m", seed=2)
    assert main(["gate", str(baseline), "--set", str(shifted)]) == 1
    assert "label mix shifted" in capsys.readouterr().out
    assert main(["gate", str(baseline), "--set", str(shifted), "--label-tolerance", "0.5"]) == 0


def test_gate_scores_a_labelled_set_with_the_baselines_model(tmp_path, capsys):
    doc = "The Eiffel Tower is in Paris. It was completed in 1889 and is made of iron."
    claims = [("The tower is in Paris.", 1), ("The tower is in Rome.", 0), ("It was completed in 1889.", 1),
              ("It is made of wood.", 0), ("It is made of iron.", 1), ("It was completed in 1920.", 0)]
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"id": f"c{i}", "task": "fact-check", "documents": [doc], "response": c,
                                        "label": y}) + "\n" for i, (c, y) in enumerate(claims)), encoding="utf-8")
    base = tmp_path / "base"
    assert main(["calibrate", "--set", str(rows), "--out", str(base), "--no-plots", "--no-progress",
                 "--threads", "1", "--resamples", "50"]) == 0
    capsys.readouterr()
    assert main(["gate", str(base), "--set", str(rows), "--out", str(tmp_path / "gate"), "--threads", "1",
                 "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "ok" in out and "paired on 6 shared rows" in out and "template: same" in out
