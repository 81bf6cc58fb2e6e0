"""``judgelab gate``: exit 1 on a real drop, changed labels, a changed template or a shifted label mix; 0 on a re-run.

Rows are matched by id: a row whose label changed is compared as what it is (its correctness
under the baseline against under the new set), never dropped from the paired test.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.calibration import LabelledRow, run
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
    assert out.startswith("judgelab gate: ok") and "paired bootstrap on 400 shared rows" in out
    assert "0 of 400 shared rows changed" in out and "only in" not in out


def test_planted_accuracy_drop_fails(baseline, tmp_path, capsys):
    worse = _write(tmp_path / "worse.jsonl", flip=0.3)  # same rows, 30% of scores turned around
    assert main(["gate", str(baseline), "--set", str(worse)]) == 1
    first, *details = capsys.readouterr().out.strip().splitlines()
    assert first.startswith("judgelab gate: FAIL: balanced_accuracy dropped") and "paired on 400 shared rows" in first
    assert any("paired bootstrap on 400 shared rows" in line for line in details)  # the test and its rows
    # the same drop within a generous allowance passes
    assert main(["gate", str(baseline), "--set", str(worse), "--max-drop", "0.5"]) == 0


def test_unpaired_drop_fails_on_new_rows(baseline, tmp_path, capsys):
    worse = _write(tmp_path / "new.jsonl", flip=0.3, prefix="n", seed=1)
    assert main(["gate", str(baseline), "--set", str(worse)]) == 1
    out = capsys.readouterr().out
    assert "unpaired" in out.splitlines()[0]
    assert "unpaired bootstrap on all rows (400 baseline, 400 new" in out
    assert "400 rows only in the new set, 400 only in the baseline (compared unpaired)" in out


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
    assert "ok" in out and "paired bootstrap on 6 shared rows" in out and "template: same" in out


# -- rows matched by id: labels, documents and responses that changed -------------------------


def _rows(n=160, seed=0):
    """160 fact-check rows, 80 of each label, one distinct claim each."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation([1] * (n // 2) + [0] * (n - n // 2))
    return [LabelledRow(id=f"r{i}", task="fact-check", documents=[f"document {i % 40}"], response=f"claim {i}",
                        label=int(y)) for i, y in enumerate(labels)]


def _scores(rows, seed=0):
    """A judge that is right more often than not: label-1 claims score higher."""
    rng = np.random.default_rng(seed)
    return {r.response: float(rng.beta(3, 1.5) if r.label else rng.beta(1.5, 3)) for r in rows}


@pytest.fixture
def scored_run(scripted_evaluator):
    """Score rows with a scripted judge through the real run() (records carry their row hashes)."""

    def score(rows, scores, out):
        run(scripted_evaluator(scores), rows, out=out / "scores.jsonl", progress=False)
        return out

    return score


@pytest.fixture
def labelled_baseline(tmp_path, scored_run):
    rows = _rows()
    scores = _scores(rows)
    return rows, scores, scored_run(rows, scores, tmp_path / "base")


def _flipped(rows, p, seed=1):
    rng = np.random.default_rng(seed)
    return [r.model_copy(update={"label": 1 - r.label}) if rng.random() < p else r for r in rows]


def test_half_the_labels_flipped_fails_and_names_the_changed_rows(labelled_baseline, scored_run, tmp_path, capsys):
    rows, scores, base = labelled_baseline
    copy = _flipped(rows, 0.5)
    changed = [r.id for r, c in zip(rows, copy) if r.label != c.label]
    assert 50 < len(changed) < 110
    new = scored_run(copy, scores, tmp_path / "half")  # same claims, same scores: only the labels moved
    assert main(["gate", str(base), "--set", str(new), "--resamples", "300"]) == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"judgelab gate: FAIL: the labels of {len(changed)} of 160 shared rows changed")
    assert ", ".join(changed[:10]) in first  # names the changed rows
    assert f"{len(changed)} of 160 shared rows changed (labels {len(changed)}, documents 0" in out
    # the paired test covers every shared row, the relabelled ones included: a real, non-zero drop
    paired = next(line for line in out.splitlines() if "paired bootstrap on 160 shared rows" in line)
    assert "+0.000 [+0.000, +0.000]" not in paired
    # with the label check loosened, the metric test itself fails on those rows
    assert main(["gate", str(base), "--set", str(new), "--resamples", "300", "--max-label-changes", "100%"]) == 1
    assert "balanced_accuracy dropped" in capsys.readouterr().out.splitlines()[0]


def test_every_label_flipped_fails(labelled_baseline, scored_run, tmp_path, capsys):
    rows, scores, base = labelled_baseline
    new = scored_run(_flipped(rows, 1.0), scores, tmp_path / "all")
    assert main(["gate", str(base), "--set", str(new), "--resamples", "300"]) == 1
    assert "the labels of 160 of 160 shared rows changed" in capsys.readouterr().out


def test_the_same_set_passes_and_a_few_relabels_are_within_the_tolerance(labelled_baseline, scored_run, tmp_path, capsys):
    rows, scores, base = labelled_baseline
    again = scored_run(rows, scores, tmp_path / "again")
    assert main(["gate", str(base), "--set", str(again), "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert "paired bootstrap on 160 shared rows" in out and "0 of 160 shared rows changed" in out
    # 3 relabelled rows (5% of 160 is 8) pass, and are named; a count of 2 fails them
    few = [r.model_copy(update={"label": 1 - r.label}) if i in (3, 7, 11) else r for i, r in enumerate(rows)]
    new = scored_run(few, scores, tmp_path / "few")
    assert main(["gate", str(base), "--set", str(new), "--resamples", "300", "--max-drop", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "3 of 160 shared rows changed (labels 3, " in out and "r3, r7, r11" in out
    assert main(["gate", str(base), "--set", str(new), "--resamples", "300", "--max-label-changes", "2"]) == 1


def test_changed_documents_and_responses_are_counted_and_new_rows_compared_unpaired(labelled_baseline, scored_run, tmp_path,
                                                                                    capsys):
    rows, scores, base = labelled_baseline
    edited = [r.model_copy(update={"documents": ["another document"]}) if i < 4 else r for i, r in enumerate(rows)]
    edited[10] = edited[10].model_copy(update={"response": "claim 10, reworded"})
    extra = [LabelledRow(id=f"x{i}", task="fact-check", documents=["d"], response=f"extra {i}", label=i % 2)
             for i in range(12)]
    scores = {**scores, "claim 10, reworded": scores["claim 10"], **_scores(extra, seed=5)}
    new = scored_run(edited + extra, scores, tmp_path / "edited")
    assert main(["gate", str(base), "--set", str(new), "--resamples", "300", "--max-drop", "0.3"]) == 0
    out = capsys.readouterr().out
    assert "5 of 160 shared rows changed (labels 0, documents 4, user text 0, response 1" in out
    assert "12 rows only in the new set, 0 only in the baseline (compared unpaired)" in out
    assert "unpaired bootstrap on all rows (160 baseline, 172 new" in out


def test_bad_max_label_changes_is_a_one_line_user_error(labelled_baseline, capsys):
    _, _, base = labelled_baseline
    assert main(["gate", str(base), "--set", str(base), "--max-label-changes", "lots"]) == 2
    # a bare scores folder (no metrics.json) adds a note line on stderr first; the error itself is one line
    err = [line for line in capsys.readouterr().err.strip().splitlines() if "no metrics.json" not in line]
    assert len(err) == 1 and "--max-label-changes" in err[0] and "Traceback" not in err[0]
