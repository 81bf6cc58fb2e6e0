"""Labelled-set loading: errors name file, line and field; --skip-invalid counts."""

from __future__ import annotations

import json

import pytest

from judgelab.calibration import LabelledRow, default_set_path, load_rows, write_rows
from judgelab.errors import DataError

GOOD = {"id": "a", "task": "fact-check", "documents": ["doc"], "response": "claim", "label": 1}


def _write(tmp_path, lines):
    p = tmp_path / "set.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_round_trip(tmp_path):
    rows = [LabelledRow(**GOOD), LabelledRow(**{**GOOD, "id": "b", "label": 0, "split": "dev", "generator": "g"})]
    p = tmp_path / "r.jsonl"
    write_rows(rows, p)
    assert list(load_rows(p).rows) == rows
    assert rows[0].to_request().response_content == "claim"
    assert rows[0].to_request().data_list[0].text == "doc"


@pytest.mark.parametrize(
    "bad, field",
    [
        ({**GOOD, "label": 2}, "label"),
        ({**GOOD, "task": "summarise"}, "task"),
        ({k: v for k, v in GOOD.items() if k != "response"}, "response"),
        ({**GOOD, "split": "train"}, "split"),
        ({**GOOD, "labels": {"tone": 3}}, "labels.tone"),
    ],
)
def test_malformed_row_names_file_line_and_field(tmp_path, bad, field):
    p = _write(tmp_path, [json.dumps(GOOD), "", json.dumps({**bad, "id": "z"})])
    with pytest.raises(DataError) as info:
        load_rows(p)
    err = info.value
    assert err.line == 3 and err.field == field and err.path == str(p)
    assert f"{p}:3" in str(err) and "--skip-invalid" in str(err)


def test_bad_json_and_duplicate_ids_are_skipped_and_counted(tmp_path):
    p = _write(tmp_path, [json.dumps(GOOD), "{not json", json.dumps(GOOD), json.dumps({**GOOD, "id": "c"})])
    with pytest.raises(DataError, match=":2"):
        load_rows(p)
    ls = load_rows(p, skip_invalid=True)
    assert [r.id for r in ls.rows] == ["a", "c"]
    assert [line for line, _ in ls.skipped] == [2, 3]
    assert "duplicate id" in ls.skipped[1][1]


def test_missing_file():
    with pytest.raises(DataError, match="Cannot read labelled set"):
        load_rows("/nonexistent/set.jsonl")


def test_starter_set_is_found_and_valid(monkeypatch, tmp_path):
    path = default_set_path()
    ls = load_rows(path)
    assert len(ls.rows) >= 100
    assert {r.task for r in ls.rows} >= {"fact-check", "relevancy"}
    # JUDGELAB_DATA_DIR wins
    (tmp_path / "calibration").mkdir()
    (tmp_path / "calibration" / "starter.jsonl").write_text(json.dumps(GOOD) + "\n")
    monkeypatch.setenv("JUDGELAB_DATA_DIR", str(tmp_path))
    assert default_set_path() == tmp_path / "calibration" / "starter.jsonl"
