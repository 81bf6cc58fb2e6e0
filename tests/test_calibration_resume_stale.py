"""A resumed calibration never reuses a stale record (issue 17, item 1).

A record is reused only when its row's content, the model spec and the
evaluator configuration are unchanged; changed rows are rescored with a
message that says how many and why, and a run of another judge is refused
before anything is scored. The CLI tests run the real ``judgelab calibrate``
with the embedded model and compare a resumed run over a changed set with a
fresh run over the same set.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from judgelab.calibration import LabelledRow, plan_resume, read_scores, row_hash, run
from judgelab.errors import DataError


def _rows(n=12):
    return [LabelledRow(id=f"r{i:02d}", task="fact-check", documents=[f"doc {i}"], response=f"c{i}",
                        label=i % 2, split="dev" if i % 3 else "test") for i in range(n)]


SCORES = {f"c{i}": 0.2 + 0.05 * i for i in range(12)}


def test_row_hash_covers_content_and_label_not_id():
    row = _rows(1)[0]
    assert row_hash(row) == row_hash(row.model_copy(update={"id": "other"}))
    for change in ({"label": 1}, {"documents": ["edited"]}, {"response": "x"}, {"task": "relevancy"},
                   {"user_text": "q"}, {"meta": {"pair": 3}}):
        assert row_hash(row.model_copy(update=change)) != row_hash(row), change


def test_flipped_labels_are_rescored_and_come_from_the_set(tmp_path, caplog, scripted_evaluator):
    rows = _rows()
    out = tmp_path / "s.jsonl"
    run(scripted_evaluator(SCORES), rows, out=out, progress=False)
    flipped = [r.model_copy(update={"label": 1 - r.label}) if i < 3 else r for i, r in enumerate(rows)]
    ev = scripted_evaluator(SCORES)
    with caplog.at_level("WARNING"):
        recs = run(ev, flipped, out=out, progress=False)
    assert ev.seen == 3  # only the changed rows were scored again
    assert "3 row(s) changed since they were scored (label: 3)" in caplog.text
    assert [r.label for r in recs] == [r.label for r in flipped]
    on_disk = read_scores(out)
    assert len(on_disk) == 12 and {r.id: r.label for r in on_disk} == {r.id: r.label for r in flipped}


def test_records_without_row_hash_are_rescored(tmp_path):
    rows = _rows(4)
    out = tmp_path / "s.jsonl"
    out.write_text("".join(json.dumps({"id": r.id, "task": r.task, "label": r.label, "score": 0.9}) + "\n"
                           for r in rows))
    plan = plan_resume(read_scores(out), rows)
    assert len(plan.todo) == 4 and not plan.reuse and "older judgelab" in plan.describe()


def test_another_evaluator_configuration_is_refused_before_scoring(judge_model, tmp_path):
    from judgelab.evaluators import FactCheckingEvaluator

    rows = _rows(3)
    out = tmp_path / "s.jsonl"
    run(FactCheckingEvaluator(judge_model), rows, out=out, progress=False)
    before = out.read_bytes()
    n_before = judge_model.stats["judgments"]
    with pytest.raises(DataError, match=r"3 record\(s\) scored by another evaluator configuration"):
        run(FactCheckingEvaluator(judge_model, threshold=0.7), rows, out=out, progress=False)
    assert judge_model.stats["judgments"] == n_before and out.read_bytes() == before


# -- the real CLI with the embedded model ------------------------------------------------------------

def _subset(starter_set: Path) -> list[dict]:
    rows = [json.loads(ln) for ln in starter_set.read_text(encoding="utf-8").splitlines() if '"fact-check"' in ln][:8]
    assert {r["split"] for r in rows} == {"dev", "test"}
    return rows


def _write(rows: list[dict], path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


CLI_OPTS = ("--no-plots", "--no-progress", "--resamples", "50", "--threads", "1")


def _calibrate(run_cli, set_path: Path, out: Path, *extra: str):
    return run_cli("calibrate", "--set", str(set_path), "--out", str(out), *CLI_OPTS, *extra, timeout=1200)


def _close(a, b, path="") -> None:
    """Two metrics.json trees are equal (floats to 1e-6: scores of one row may come from another batch)."""
    if isinstance(a, dict):
        assert set(a) == set(b), (path, set(a) ^ set(b))
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b)), (path, a, b)
    else:
        assert a == b, (path, a, b)


def _tasks(out: Path) -> dict:
    return json.loads((out / "metrics.json").read_text())["tasks"]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory, run_cli, starter_set):
    tmp = tmp_path_factory.mktemp("stale")
    rows = _subset(starter_set)
    set_path = _write(rows, tmp / "sub.jsonl")
    proc = _calibrate(run_cli, set_path, tmp / "base")
    assert proc.returncode == 0, proc.stderr
    return rows, tmp / "base"


def _resumed_equals_fresh(run_cli, base_run, tmp_path, changed_rows, expect):
    rows, base = base_run
    set_path = _write(changed_rows, tmp_path / "changed.jsonl")
    resumed = tmp_path / "resumed"
    shutil.copytree(base, resumed)
    proc = _calibrate(run_cli, set_path, resumed)
    assert proc.returncode == 0, proc.stderr
    assert expect in proc.stderr, proc.stderr
    fresh_proc = _calibrate(run_cli, set_path, tmp_path / "fresh")
    assert fresh_proc.returncode == 0, fresh_proc.stderr
    assert "changed since" not in fresh_proc.stderr
    _close(_tasks(resumed), _tasks(tmp_path / "fresh"))
    assert _tasks(resumed) != _tasks(base) or expect is None
    labels = {r.id: r.label for r in read_scores(resumed / "scores.jsonl")}
    assert labels == {r["id"]: r["label"] for r in changed_rows}


@pytest.mark.slow
def test_cli_resume_after_flipping_labels_matches_a_fresh_run(run_cli, base_run, tmp_path):
    rows, _ = base_run
    flipped = [{**r, "label": 1 - r["label"]} if i < 3 else r for i, r in enumerate(rows)]
    _resumed_equals_fresh(run_cli, base_run, tmp_path, flipped, "3 row(s) changed since they were scored (label: 3)")


@pytest.mark.slow
def test_cli_resume_after_editing_a_document_matches_a_fresh_run(run_cli, base_run, tmp_path):
    rows, _ = base_run
    edited = [{**r, "documents": ["Nothing in this document supports the claim."]} if i in (1, 2) else r
              for i, r in enumerate(rows)]
    _resumed_equals_fresh(run_cli, base_run, tmp_path, edited,
                          "2 row(s) changed since they were scored (text, documents or other fields: 2)")


@pytest.mark.slow
def test_cli_finished_run_with_another_spec_is_refused_before_scoring(run_cli, user_error, repo_root, base_run, tmp_path):
    rows, base = base_run
    set_path = _write(rows, tmp_path / "same.jsonl")
    resumed = tmp_path / "resumed"
    shutil.copytree(base, resumed)
    before = (resumed / "scores.jsonl").read_bytes()
    spec = tmp_path / "other-judge.toml"
    gemma = (repo_root / "models" / "gemma-3-270m.toml").read_text(encoding="utf-8")
    spec.write_text(gemma.replace('id = "gemma-3-270m"', 'id = "other-judge"', 1), encoding="utf-8")
    proc = _calibrate(run_cli, set_path, resumed, "--model", str(spec))
    user_error(proc, "8 record(s) scored by another model spec", "--out")
    assert (resumed / "scores.jsonl").read_bytes() == before
