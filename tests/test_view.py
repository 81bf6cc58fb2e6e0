"""``judgelab view`` without a browser: the rows table's server-side query, the pages over HTTP, label
corrections (the file, ``calibrate --corrections``' reader, ``gate --corrections``), and the address checks.

Runs are scored with the scripted judge through the real ``run()`` and analysed by the real
``analyze_run()`` (metrics.json, report.html and the calibrator as calibrate writes them); the real
model's path through the viewer is in test_view_browser.py.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from judgelab.calibration import (
    CalibrationOptions,
    Correction,
    LabelledRow,
    analyze_run,
    append_correction,
    apply_corrections,
    corrections_beside,
    read_corrections,
    read_scores,
    run,
    write_rows,
)
from judgelab.cli import main
from judgelab.errors import DataError, JudgelabError, ParameterError
from judgelab.testing import ScriptedEvaluator
from judgelab.view import RowQuery, ViewConfig, check_address, create_app, differing_rows, load_view_run, query_rows


def make_rows(n: int = 120, seed: int = 0) -> list[LabelledRow]:
    rng = np.random.default_rng(seed)
    return [LabelledRow(id=f"r{i:04d}", task="fact-check", documents=[f"Document {i}: the river flows north."],
                        response=f"Claim {i}: the river flows {'north' if y else 'south'}.", label=int(y),
                        split="dev" if i % 2 else "test", group=("news", "wiki")[i % 2 == 0 and i % 3 == 0])
            for i, y in enumerate(rng.integers(0, 2, n))]


def make_run(folder: Path, rows: list[LabelledRow], seed: int = 0) -> Path:
    """A set beside a scored, analysed run: folder/set.jsonl, folder/run/{scores.jsonl, metrics.json, ...}."""
    rng = np.random.default_rng(seed)
    set_path = folder / "set.jsonl"
    if not set_path.exists():
        write_rows(rows, set_path)
    scores = {r.response: float(rng.beta(3, 1.5) if r.label else rng.beta(1.5, 3)) for r in rows}
    out = folder / f"run{seed}"
    run(ScriptedEvaluator(scores), rows, out=out / "scores.jsonl", progress=False)
    analyze_run(out / "scores.jsonl", out, meta={"set": str(set_path), "model": "scripted"},
                options=CalibrationOptions(n_resamples=30, figures=False), policy_delta=None)
    return out


@pytest.fixture(scope="module")
def view_run(tmp_path_factory) -> Path:
    return make_run(tmp_path_factory.mktemp("view"), make_rows())


# -- the rows table ----------------------------------------------------------------------------


def test_rows_are_sorted_by_disagreement_by_default(view_run):
    v = load_view_run(view_run)
    page = query_rows(v, RowQuery(per_page=500))
    assert page.total == page.matched == 120
    right = [r.right for r in page.rows]
    n_wrong = right.count(False)
    assert 0 < n_wrong < 120 and right == [False] * n_wrong + [True] * (120 - n_wrong)  # wrong rows first
    cut = v.calibrated_thresholds.get("fact-check", v.thresholds["fact-check"])  # raw shipped: the raw threshold
    margins = [abs(r.calibrated - cut) for r in page.rows]
    assert margins[:n_wrong] == sorted(margins[:n_wrong], reverse=True)  # the most confidently wrong first
    assert margins[n_wrong:] == sorted(margins[n_wrong:])  # then the right ones, closest calls first
    assert page.rows[0].document.startswith("Document") and page.rows[0].claim.startswith("Claim")


def test_filters_search_sort_and_pages(view_run):
    v = load_view_run(view_run)
    wrong = query_rows(v, RowQuery(verdict="wrong", per_page=500))
    assert wrong.matched > 0 and all(r.right is False for r in wrong.rows)
    fp = query_rows(v, RowQuery(verdict="false-pass", per_page=500))
    assert all(r.verdict == "pass" and r.label == 0 for r in fp.rows)
    band = query_rows(v, RowQuery(min_score=0.2, max_score=0.4, split="test", per_page=500))
    assert all(0.2 <= (r.score or 0) <= 0.4 and r.split == "test" for r in band.rows)
    found = query_rows(v, RowQuery(q="CLAIM 17:"))
    assert [r.id for r in found.rows] == ["r0017"]
    asc = query_rows(v, RowQuery(sort="score", order="asc", per_page=10, page=2))
    assert asc.page == 2 and asc.pages == 12 and len(asc.rows) == 10
    scores = [r.score for r in query_rows(v, RowQuery(sort="score", order="asc", per_page=500)).rows]
    assert scores == sorted(scores) and asc.rows[0].score == scores[10]
    ids = [r.id for r in query_rows(v, RowQuery(sort="id", order="desc", per_page=3)).rows]
    assert ids == ["r0119", "r0118", "r0117"]


def test_pages_over_http(view_run):
    client = TestClient(create_app([load_view_run(view_run)], ViewConfig(n_resamples=20)))
    html = client.get("/", params={"verdict": "wrong", "sort": "score:desc"}).text
    assert "Verdicts at the shipped threshold" in html and "verdict differs from label" in html
    assert 'aria-sort="descending"' in html and "<th>rows</th>" in html  # the run's facts, by the report renderer
    row = client.get("/row", params={"id": "r0003"}).text
    assert "Label probabilities" in row and "Claim 3:" in row and "Evaluate whether or not" not in row
    assert client.get("/report").text.startswith("<!doctype html>")  # the run's own report.html
    assert client.get("/assets/view.js").status_code == 200
    api = client.get("/api/rows", params={"per_page": 2, "task": "fact-check"}).json()
    assert api["matched"] == 120 and len(api["rows"]) == 2
    assert client.get("/row", params={"id": "nope"}).status_code == 404
    assert "min_score" in client.get("/api/rows", params={"min_score": 3}).json()["error"]


def test_two_runs_compared(tmp_path):
    rows = make_rows(80)
    a, b = make_run(tmp_path, rows, seed=1), make_run(tmp_path, rows, seed=2)
    va, vb = load_view_run(a), load_view_run(b)
    differ = differing_rows(va, vb)
    assert differ and all(d.pass_a != d.pass_b for d in differ)
    html = TestClient(create_app([va, vb], ViewConfig(n_resamples=20))).get("/compare").text
    assert "Paired comparison" in html and "B - A [95% CI]" in html and "McNemar" in html
    assert f"Rows whose verdicts differ ({len(differ)})" in html


def test_api_key_is_required_when_set(view_run):
    client = TestClient(create_app([load_view_run(view_run)], ViewConfig(api_key="s3cret")))
    assert client.get("/").status_code == 401 and client.get("/healthz").status_code == 200
    assert client.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.get("/", params={"key": "s3cret"}).status_code == 200
    assert client.get("/").status_code == 200  # the cookie the key set


# -- label corrections ---------------------------------------------------------------------------


def test_a_correction_posted_is_appended_beside_the_set(view_run):
    v = load_view_run(view_run)
    assert v.corrections == corrections_beside(v.set_name) == view_run.parent / "corrections.jsonl"
    client = TestClient(create_app([v], ViewConfig(who="tester")))
    form = client.get("/row", params={"id": "r0005"}).text
    token = re.search(r'name="csrf" value="([^"]+)"', form).group(1)
    before = (view_run.parent / "set.jsonl").read_bytes()
    label = v.record("r0005").label
    assert client.post("/correct", data={"id": "r0005", "new_label": str(1 - label), "note": "x",
                                         "csrf": "forged"}).status_code == 403
    r = client.post("/correct", data={"run": "0", "id": "r0005", "new_label": str(1 - label),
                                      "note": "the document says so", "csrf": token})
    assert r.status_code == 200 and "Correction saved" in r.text and "the document says so" in r.text
    (c,) = read_corrections(v.corrections)
    assert (c.id, c.old_label, c.new_label, c.who, c.task) == ("r0005", label, 1 - label, "tester", "fact-check")
    assert (view_run.parent / "set.jsonl").read_bytes() == before  # never an edit of the set
    v.corrections.unlink()


def test_apply_corrections_counts_what_it_did(tmp_path):
    rows = make_rows(6)
    path = tmp_path / "corrections.jsonl"
    append_correction(path, Correction(id="r0001", old_label=rows[1].label, new_label=1 - rows[1].label, note="a"))
    append_correction(path, Correction(id="r0002", old_label=1 - rows[2].label, new_label=rows[2].label))  # no-op
    append_correction(path, Correction(id="zzz", old_label=0, new_label=1))
    fixed, applied = apply_corrections(rows, path)
    assert applied.corrected == ("r0001",) and applied.unmatched == ("zzz",) and applied.stale == ()
    assert fixed[1].label == 1 - rows[1].label and [r.label for r in fixed[2:]] == [r.label for r in rows[2:]]
    assert len(applied.sha256) == 64 and "1 label(s) corrected" in applied.describe()
    path.write_text(path.read_text() + '{"id": "r9", "old_label": 3}\n')
    with pytest.raises(DataError, match=r"corrections.jsonl:4 field 'old_label'"):
        read_corrections(path)


def test_gate_reports_rows_a_correction_relabelled(tmp_path, capsys):
    rows = make_rows(60)
    base = make_run(tmp_path, rows)
    flip = rows[7]
    corrections = tmp_path / "corrections.jsonl"
    append_correction(corrections, Correction(id=flip.id, old_label=flip.label, new_label=1 - flip.label, note="n"))
    code = main(["gate", str(base), "--set", str(base), "--corrections", str(corrections), "--resamples", "30"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 of 60 shared rows changed (labels 1" in out and flip.id in out
    assert "corrections: 1 label(s) corrected by" in out
    assert read_scores(base / "scores.jsonl")[7].label == flip.label  # the run's files are not touched


# -- addresses -------------------------------------------------------------------------------


def test_a_remote_host_needs_allow_remote_and_a_key():
    check_address("127.0.0.1", allow_remote=False, api_key=None)
    check_address("::1", allow_remote=False, api_key=None)
    with pytest.raises(ParameterError, match="--allow-remote and --api-key"):
        check_address("0.0.0.0", allow_remote=False, api_key="k")
    with pytest.raises(ParameterError, match="needs an API key"):
        check_address("0.0.0.0", allow_remote=True, api_key=None)
    check_address("0.0.0.0", allow_remote=True, api_key="k")


def test_cli_refuses_a_busy_port_and_a_remote_host_in_one_line(view_run, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["view", str(view_run), "--port", str(port), "--no-browser"]) == 2
        err = capsys.readouterr().err
        assert f"judgelab view: error: port {port} on 127.0.0.1 is already in use" in err and "--port 0" in err
        assert len(err.strip().splitlines()) == 1
    assert main(["view", str(view_run), "--host", "0.0.0.0", "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "--allow-remote and --api-key" in err and len(err.strip().splitlines()) == 1


def test_a_run_without_scores_is_one_clear_error(tmp_path):
    with pytest.raises(JudgelabError, match="No scores.jsonl"):
        load_view_run(tmp_path)


def test_view_reads_a_bare_scores_file_at_half(tmp_path):
    rows = make_rows(10)
    scores = {r.response: 0.6 for r in rows}
    run(ScriptedEvaluator(scores), rows, out=tmp_path / "s" / "scores.jsonl", progress=False)
    v = load_view_run(tmp_path / "s" / "scores.jsonl")
    assert v.thresholds == {"fact-check": 0.5} and v.set_problem and all(r.verdict == "pass" for r in
                                                                         query_rows(v, RowQuery()).rows)
    assert json.loads(TestClient(create_app([v])).get("/api/rows").text)["total"] == 10


def test_a_stress_folder_is_read_with_its_rows_and_the_runs_thresholds(view_run, tmp_path):
    stress = tmp_path / "stress"
    rows = [r.model_copy(update={"id": f"{r.id}#typo", "response": r.response + "!"}) for r in make_rows(12)]
    write_rows(rows, stress / "rows.jsonl")
    run(ScriptedEvaluator({r.response: 0.7 for r in rows}), rows, out=stress / "scores.jsonl", progress=False)
    (tmp_path / "metrics.json").write_bytes((view_run / "metrics.json").read_bytes())
    v = load_view_run(stress)
    assert v.thresholds == load_view_run(view_run).thresholds and v.set_problem is None
    assert query_rows(v, RowQuery(q="#typo")).matched == 12 and v.record("r0001#typo").label == rows[1].label
