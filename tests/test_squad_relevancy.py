"""SQuAD as relevancy rows (issue 62): the kinds of reply, their labels, and what each may not hold."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from judgelab.calibration import SQUAD_RELEVANCY_KINDS, import_set, import_squad_relevancy
from judgelab.errors import DataError

ROOT = Path(__file__).resolve().parents[1]

TESLA = ("Nikola Tesla was born in 1856 in Smiljan. He moved to the United States in 1884 to work for Thomas Edison. "
         "Tesla later founded his own laboratory in New York.")
RHINE = "The Rhine rises in the Swiss Alps. It flows for 1,230 kilometres before it reaches the North Sea."


def _qa(qid, question, answer, context, impossible=False):
    answers = [] if impossible else [{"text": answer, "answer_start": context.index(answer)}]
    return {"id": qid, "question": question, "answers": answers, **({"is_impossible": True} if impossible else {})}


def _squad(tmp_path: Path) -> Path:
    data = {"version": "1.1", "data": [
        {"title": "Nikola_Tesla", "paragraphs": [{"context": TESLA, "qas": [
            _qa("t1", "When was Tesla born?", "1856", TESLA),
            _qa("t2", "Who did Tesla work for in the United States?", "Thomas Edison", TESLA),
            _qa("t3", "Where did Tesla found his laboratory?", "New York", TESLA),
            _qa("t4", "What did Tesla invent on the moon?", "", TESLA, impossible=True),
            _qa("t5", "When did Tesla move to the United States?", "1884", TESLA),
        ]}]},
        {"title": "Rhine", "paragraphs": [{"context": RHINE, "qas": [
            _qa("r1", "Where does the Rhine rise?", "Swiss Alps", RHINE),
            _qa("r2", "How long is the Rhine?", "1,230 kilometres", RHINE),
        ]}]},
    ]}
    path = tmp_path / "dev-v1.1.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _by(rows, question, kind):
    return next(r for r in rows if r.meta["question"] == question and r.meta["kind"] == kind)


def test_each_question_gives_its_answer_sentence_and_three_replies_that_do_not_answer(tmp_path):
    rows = import_set("squad-relevancy", _squad(tmp_path))
    assert {r.meta["question"] for r in rows} == {"t1", "t2", "t3", "t5", "r1", "r2"}  # t4 has no answer
    assert all(r.task == "relevancy" and r.label == SQUAD_RELEVANCY_KINDS[r.meta["kind"]] for r in rows)
    born = {r.meta["kind"]: r for r in rows if r.meta["question"] == "t1"}
    assert set(born) == set(SQUAD_RELEVANCY_KINDS)
    assert born["on-topic"].response == "Nikola Tesla was born in 1856 in Smiljan."
    assert born["on-topic"].user_text == "When was Tesla born?" and born["on-topic"].documents == [TESLA]
    # another question's answer sentence, which does not hold 1856
    assert born["different-question"].response == "He moved to the United States in 1884 to work for Thomas Edison."
    # 1856 swapped for another question's answer of the same shape (1884, a number), not for a name
    assert born["contradicts-context"].response == "Nikola Tesla was born in 1884 in Smiljan."
    # a sentence of the other article
    assert born["off-topic"].response in RHINE


def test_a_contradiction_swaps_a_name_for_a_name(tmp_path):
    rows = import_squad_relevancy(_squad(tmp_path))
    edison = _by(rows, "t2", "contradicts-context").response
    assert edison == "He moved to the United States in 1884 to work for New York."
    assert "Thomas Edison" not in edison


def test_rows_over_one_paragraph_are_one_unit(tmp_path):
    rows = import_squad_relevancy(_squad(tmp_path))
    units = {r.meta["title"]: set() for r in rows}
    for r in rows:
        units[r.meta["title"]].add(r.unit)
    assert all(len(u) == 1 for u in units.values()) and len({next(iter(u)) for u in units.values()}) == 2


def test_a_different_question_reply_never_holds_the_answer(tmp_path):
    context = "Paris is the capital of France. Paris has about two million people."
    data = {"data": [{"title": "Paris", "paragraphs": [{"context": context, "qas": [
        _qa("p1", "What is the capital of France?", "Paris", context),
        _qa("p2", "How many people live in Paris?", "about two million", context)]}]}]}
    path = tmp_path / "paris.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    rows = import_squad_relevancy(path)
    # p2's sentence names Paris, the answer of p1: no different-question reply for p1
    assert not [r for r in rows if r.meta["question"] == "p1" and r.meta["kind"] == "different-question"]
    assert _by(rows, "p2", "different-question").response == "Paris is the capital of France."
    assert not [r for r in rows if r.meta["kind"] == "off-topic"]  # one article: nothing is off its topic


def test_a_file_that_is_not_squad_says_so(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([{"claim": "x"}]), encoding="utf-8")
    with pytest.raises(DataError, match="not a SQuAD file"):
        import_squad_relevancy(path)
    path.write_text(json.dumps({"data": [{"title": "x", "paragraphs": [{"qas": []}]}]}), encoding="utf-8")
    with pytest.raises(DataError, match=r"paragraphs\[0\]: a SQuAD paragraph needs 'context'"):
        import_squad_relevancy(path)


def test_the_explorer_page_reader_gives_the_official_shape():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from squad_from_explorer import parse_page

    page = ('<h1 id="title">Rhine</h1><div class="para-wrap"><pre>The Rhine rises in the Swiss Alps &amp; flows north.'
            '</pre><div class="qa-wrap"><p> <strong class="question">Where does the Rhine rise?</strong></p>'
            '<ol class="list-unstyled"><li><p><i>Answer 1:</i><span class="answer"> Swiss Alps</span></p></li>'
            '<li><p><i>Answer 2:</i><span class="answer"> the Moon</span></p></li></ol></div></div>')
    article, dropped = parse_page(page, "Rhine")
    assert dropped == 1  # "the Moon" is not in the paragraph
    paragraph = article["paragraphs"][0]
    assert paragraph["context"] == "The Rhine rises in the Swiss Alps & flows north."
    assert paragraph["qas"] == [{"id": "Rhine-0-0", "question": "Where does the Rhine rise?",
                                 "answers": [{"text": "Swiss Alps", "answer_start": 23}]}]


def test_the_same_paragraph_set_keeps_the_answer_sentence_against_its_neighbours_only(tmp_path):
    path = _squad(tmp_path)
    every = import_squad_relevancy(path)
    rows = import_set("squad-same-paragraph", path)
    assert {r.meta["kind"] for r in rows} == {"on-topic", "different-question"}
    # the same rows as the full set's two kinds, in the same order, with the same ids
    assert [r.id for r in rows] == [r.id for r in every if r.meta["kind"] in ("on-topic", "different-question")]
    assert {r.label for r in rows} == {0, 1}
    negative = _by(rows, "t1", "different-question")
    assert negative.documents == _by(rows, "t1", "on-topic").documents and negative.response in TESLA


def test_an_unknown_kind_names_the_kinds(tmp_path):
    with pytest.raises(DataError, match="unknown kind.*'same-topic'.*on-topic, different-question"):
        import_squad_relevancy(_squad(tmp_path), kinds=["same-topic"])
