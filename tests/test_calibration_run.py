"""Scoring runs: one record per row, resumable after a kill or Ctrl-C, same file as uninterrupted."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from judgelab.calibration import LabelledRow, read_scores, run, write_rows
from judgelab.errors import DataError

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"


def _rows(n=40, seed=0):
    rng = np.random.default_rng(seed)
    rows, scores = [], {}
    for i in range(n):
        y = int(rng.integers(0, 2))
        rows.append(LabelledRow(id=f"r{i:03d}", task="fact-check", documents=["d"], response=f"c{i}", label=y,
                                group="g", generator="gen", split="dev" if i % 2 else "test"))
        scores[f"c{i}"] = float(np.clip(rng.normal(0.4 + 0.2 * y, 0.15), 0.01, 0.99))
    return rows, scores


def _stable(path):
    """The file's records without the timing field (the only thing that may differ)."""
    out = []
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        rec.pop("seconds")
        out.append(rec)
    return out


def test_run_writes_a_record_per_row_through_evaluate_many(tmp_path, scripted_evaluator):
    rows, scores = _rows()
    ev = scripted_evaluator(scores)
    recs = run(ev, rows, out=tmp_path / "s.jsonl", batch_size=8, progress=False)
    assert [r.id for r in recs] == [r.id for r in rows]
    assert ev.batches == [8] * 5
    r = recs[0]
    assert r.probabilities["Yes"] == pytest.approx(r.score)
    assert r.model == "scripted" and r.spec_hash == "s1" and r.chunks == [r.score]
    assert r.label == rows[0].label and r.split == rows[0].split and r.seconds is not None


def test_rerun_skips_done_rows(tmp_path, scripted_evaluator):
    rows, scores = _rows()
    out = tmp_path / "s.jsonl"
    run(scripted_evaluator(scores), rows[:10], out=out, progress=False)
    ev = scripted_evaluator(scores)
    run(ev, rows, out=out, progress=False)
    assert ev.seen == 30
    assert len(read_scores(out)) == 40


def test_kill_and_resume_gives_the_same_file(tmp_path, scripted_evaluator):
    rows, scores = _rows()
    set_path = tmp_path / "set.jsonl"
    write_rows(rows, set_path)
    (tmp_path / "scores.json").write_text(json.dumps(scores))
    full = tmp_path / "full.jsonl"
    run(scripted_evaluator(scores), rows, out=full, batch_size=4, progress=False)

    resumed = tmp_path / "resumed.jsonl"
    script = textwrap.dedent(f"""
        import json, sys
        sys.path[:0] = [{str(TESTS)!r}, {str(SRC)!r}]
        from judgelab.testing import ScriptedEvaluator
        from judgelab.calibration import load_rows, run
        scores = json.load(open({str(tmp_path / 'scores.json')!r}))
        run(ScriptedEvaluator(scores, die_after=int(sys.argv[1])), load_rows({str(set_path)!r}).rows,
            out={str(resumed)!r}, batch_size=4, progress=False)
    """)
    proc = subprocess.run([sys.executable, "-c", script, "13"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 137, proc.stderr
    assert len(read_scores(resumed)) == 12  # 3 whole batches; the batch in flight is lost
    # simulate a kill in the middle of a write: a partial last line
    with resumed.open("a") as fh:
        fh.write('{"id": "r012", "task": "fact-che')
    run(scripted_evaluator(scores), rows, out=resumed, batch_size=4, progress=False)
    assert _stable(resumed) == _stable(full)


def test_ctrl_c_leaves_a_readable_file(tmp_path, scripted_evaluator):
    rows, scores = _rows()
    out = tmp_path / "s.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run(scripted_evaluator(scores, interrupt_after=10), rows, out=out, batch_size=5, progress=False)
    assert [r.id for r in read_scores(out)] == [r.id for r in rows[:10]]


def test_failing_row_is_recorded_not_counted_as_fail_and_retried(tmp_path, scripted_evaluator):
    rows, scores = _rows(10)
    out = tmp_path / "s.jsonl"
    recs = run(scripted_evaluator(scores, fail_on=frozenset({"c3"})), rows, out=out, batch_size=4, progress=False)
    bad = [r for r in recs if not r.ok]
    assert [r.id for r in bad] == ["r003"] and "cannot judge" in bad[0].error and bad[0].passed is None
    recs = run(scripted_evaluator(scores), rows, out=out, progress=False)
    assert all(r.ok for r in recs) and len(recs) == 10


def test_other_model_in_same_file_is_refused(tmp_path, scripted_evaluator):
    rows, scores = _rows(10)
    out = tmp_path / "s.jsonl"
    run(scripted_evaluator(scores), rows[:5], out=out, progress=False)
    other = scripted_evaluator(scores)
    orig = other.evaluate_many

    def rehash(reqs):
        res = orig(reqs)
        from judgelab.evaluators import EvaluationResponse
        return [EvaluationResponse(r.passed, r.score, r.feedback, {**r.metadata, "spec_hash": "other"}) for r in res]

    other.evaluate_many = rehash
    with pytest.raises(DataError, match="another model"):
        run(other, rows, out=out, progress=False)


def test_malformed_middle_line_is_an_error(tmp_path):
    out = tmp_path / "s.jsonl"
    out.write_text('{"id": "a", "task": "fact-check", "label": 1, "score": 0.5}\n{"id": 3}\n{"id": "b", "task": "x", "label": 0}\n')
    with pytest.raises(DataError, match=":2"):
        read_scores(out)
