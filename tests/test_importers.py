"""Importers read the real files in ../shared/data; counts match PROVENANCE.md."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from judgelab.calibration import import_set
from judgelab.errors import DataError, JudgelabError


def test_wice_dev(shared_data):
    rows = import_set("wice", shared_data / "wice" / "dev.jsonl")
    assert len(rows) == 349
    assert sum(r.label for r in rows) == 115  # supported
    assert len({r.id for r in rows}) == 349
    r = rows[0]
    assert r.task == "fact-check" and r.documents and r.response and r.group == "wice"


def test_halueval_qa(shared_data):
    rows = import_set("halueval-qa", shared_data / "halueval" / "qa_one-turn.jsonl")
    assert len(rows) == 1000  # 500 questions x 2 answers
    assert Counter(r.label for r in rows) == {1: 500, 0: 500}
    right, wrong = rows[0], rows[1]
    assert right.documents == wrong.documents and right.user_text == wrong.user_text
    assert right.meta["pair"] == wrong.meta["pair"]



def test_halueval_qa_relevancy_gives_three_rows_a_question(tmp_path):
    path = tmp_path / "qa.jsonl"
    lines = [
        {"knowledge": "Paris is the capital of France.", "question": "What is the capital of France?",
         "right_answer": "Paris", "hallucinated_answer": "Lyon"},
        {"knowledge": "The Nile flows into the Mediterranean.", "question": "Where does the Nile end?",
         "right_answer": "The Mediterranean Sea", "hallucinated_answer": "The Red Sea"},
        {"knowledge": "Bees make honey.", "question": "Which insect makes honey?",
         "right_answer": "paris", "hallucinated_answer": "Wasps"},
    ]
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    rows = import_set("halueval-qa-relevancy", path)
    by_unit = {}
    for r in rows:
        by_unit.setdefault(r.meta["pair"], []).append(r)
    assert all(r.task == "relevancy" for r in rows)
    first = by_unit["halueval-qa-relevancy-1"]
    assert [(r.response, r.label, r.meta["kind"]) for r in first] == [
        ("Paris", 1, "on-topic"), ("Lyon", 0, "contradicts-context"),
        ("The Mediterranean Sea", 0, "different-question")]
    assert {r.user_text for r in first} == {"What is the capital of France?"}
    # the last question takes the first one's answer, unless it is its own answer again
    assert [r.meta["kind"] for r in by_unit["halueval-qa-relevancy-3"]] == ["on-topic", "contradicts-context"]
    assert len({r.id for r in rows}) == len(rows) == 8

def test_halueval_general(shared_data):
    rows = import_set("halueval-general", shared_data / "halueval" / "general.jsonl")
    assert len(rows) == 4507
    assert Counter(r.label for r in rows) == {1: 3692, 0: 815}  # 815 hallucinated
    assert all(not r.documents for r in rows[:50])


def test_faithbench_drop_and_map_questionable(shared_data):
    path = shared_data / "faithbench" / "FaithBench.csv"
    rows = import_set("faithbench", path)
    # worst-label: Unwanted 485, Consistent 174, Benign 64, Questionable 77 (dropped)
    assert len(rows) == 800 - 77
    assert Counter(r.label for r in rows) == {0: 485, 1: 238}
    assert len({r.generator for r in rows}) == 10
    strict = import_set("faithbench", path, questionable="fail")
    assert len(strict) == 800 and sum(1 - r.label for r in strict) == 485 + 77
    # summaries of the same source share a fold group; different sources do not
    by_source: dict[str, set[str]] = {}
    for r in strict:
        by_source.setdefault(r.documents[0], set()).add(r.unit)
    assert all(len(groups) == 1 for groups in by_source.values())
    assert len({next(iter(g)) for g in by_source.values()}) == len(by_source) < len(strict)


def test_unknown_kind_and_wrong_file(tmp_path):
    with pytest.raises(JudgelabError, match="Unknown data set kind"):
        import_set("nope", tmp_path / "x")
    f = tmp_path / "w.jsonl"
    f.write_text('{"claim": "x"}\n')
    with pytest.raises(DataError, match="no field 'label'"):
        import_set("wice", f)


def test_sets_import_cli(shared_data, tmp_path, capsys):
    from judgelab.calibration import load_rows
    from judgelab.cli import main

    out = tmp_path / "qa.jsonl"
    assert main(["sets", "import", "halueval-qa", str(shared_data / "halueval" / "qa_one-turn.jsonl"), "--out", str(out)]) == 0
    assert "wrote 1000 rows" in capsys.readouterr().out
    assert len(load_rows(out)) == 1000


def test_summedits(shared_data):
    folder = shared_data / "summedits"
    rows = import_set("summedits", folder)
    assert len(rows) == 3117  # PROVENANCE.md: 3,117 summaries in 5 domains
    assert Counter(r.group for r in rows) == {"news": 819, "ectsum": 668, "samsum": 664, "podcast": 500, "scitldr": 466}
    assert len({r.id for r in rows}) == 3117
    assert all(r.task == "fact-check" and r.documents and r.response for r in rows)
    # edits of one original summary share meta.pair with it (and its label-1 "_og" row)
    og = next(r for r in rows if r.id.endswith("_og"))
    family = [r for r in rows if r.meta["pair"] == og.meta["pair"]]
    assert len(family) > 1 and og.label == 1 and {r.group for r in family} == {og.group}
    one = import_set("summedits", folder / "summedits_samsum.json")
    assert len(one) == 664 and {r.group for r in one} == {"samsum"}
    assert len(import_set("summedits", folder, domains="news,podcast")) == 819 + 500
