"""The contamination check (``judgelab sets overlap``) and tuning's exclusion, on tiny rows and on the real pool."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from judgelab.calibration import (
    Exclusion,
    LabelledRow,
    OverlapIndex,
    OverlapOptions,
    deletion_pairs,
    load_rows,
    overlap_groups,
    overlap_report,
    resolve_set,
    write_rows,
)
from judgelab.calibration.data import normalise_text
from judgelab.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

ARTICLE = (
    "The council approved the new budget on Tuesday after a long debate about school funding. "
    "Spending on libraries will rise by four percent next year, the treasurer said in a statement. "
    "The mayor praised the compromise reached by both parties late in the evening session. "
    "Road repairs were postponed until the spring because of the cold weather this winter. "
    "Residents can comment on the plan at a public meeting in the town hall next month. "
    "A new bus line to the hospital will open in March, serving the northern districts. "
)
OTHER_ARTICLE = (
    "Fishermen gathered at the harbour on Friday to hear plans for the coming season. "
    "The harbour will be dredged next summer so that larger ships can dock at the pier. "
    "A festival of music and food is planned for the first weekend of August this year. "
    "The old lighthouse is closed to visitors while its stairs are being repaired. "
    "Ferry tickets to the islands will cost the same as last year, the operator said. "
    "Volunteers cleaned the beaches along the bay on Sunday morning before the storm. "
)


def row(rid: str, document: str, claim: str, label: int = 1, **extra: object) -> LabelledRow:
    return LabelledRow(id=rid, task="fact-check", documents=[document], response=claim, label=label, **extra)  # type: ignore[arg-type]


def kinds(index: OverlapIndex, r: LabelledRow) -> set[str]:
    return {m.kind for m in index.matches(r)}


def test_claim_twin_is_caught():
    # FactCG's twin: the same claim, its support removed from a document that differs by a few sentences
    claim = "Spending on libraries will rise by four percent next year according to the treasurer."
    evaluation = [row("eval-1", ARTICLE, claim, 1)]
    twin_doc = ARTICLE.replace("Spending on libraries will rise by four percent next year, the treasurer said in a statement. ", "")
    index = OverlapIndex(evaluation)
    found = index.matches(row("train-1", twin_doc, claim, 0))
    assert found and found[0].reference_id == "eval-1"
    assert index.overlaps(row("train-1", twin_doc, claim, 0)) == "claim"
    assert index.overlaps(row("other", "A cat sat on the mat near the window.", "The cat sat down.")) is None


def test_shared_long_sentence_is_caught_and_short_one_is_not():
    long_sentence = "The mayor praised the compromise reached by both parties late in the evening session."
    evaluation = [row("eval-1", "Something else happened first. " + long_sentence, "The mayor was pleased.")]
    index = OverlapIndex(evaluation)
    other = row("train-1", long_sentence + " Then the meeting ended early for the holidays.", "Meeting ended.")
    assert index.overlaps(other) == "sentence"
    short = OverlapIndex([row("e", "The vote was close. It passed.", "It passed narrowly.")])
    assert short.overlaps(row("t", "The vote was close. It failed.", "It failed narrowly.")) is None


def test_normalisation_ignores_case_spacing_and_punctuation():
    evaluation = [row("eval-1", ARTICLE, "The budget was approved on Tuesday.")]
    index = OverlapIndex(evaluation)
    shouted = ARTICLE.upper().replace(". ", " .  ")
    assert index.overlaps(row("train-1", shouted, "Something unrelated entirely, for the record.")) == "document"


def test_near_duplicate_document_is_caught_with_its_threshold():
    evaluation = [row("eval-1", ARTICLE, "The council approved the budget.")]
    sentences = ARTICLE.split(". ")
    edited = ". ".join(s.replace("four", "five").replace("March", "April").replace("spring", "summer")
                       for s in sentences)
    index = OverlapIndex(evaluation, OverlapOptions(min_sentence_chars=1000))  # only the near-duplicate kind can fire
    (match,) = index.matches(row("train-1", edited, "A different claim about the town."))
    assert match.kind == "near-duplicate" and 0.5 <= float(match.detail) < 1.0
    strict = OverlapIndex(evaluation, OverlapOptions(min_sentence_chars=1000, near_duplicate=0.99))
    assert strict.matches(row("train-1", edited, "A different claim about the town.")) == []


def test_deletion_pair_of_an_excluded_parent_is_never_built(tmp_path):
    parent = row("fib-1", ARTICLE, "Spending on libraries will rise by four percent next year.", 1)
    other = row("fib-2", OTHER_ARTICLE, "The harbour will be dredged next summer to let larger ships dock.", 1)
    assert deletion_pairs([parent]), "the fixture must be able to make a pair"
    path = tmp_path / "pool.jsonl"
    write_rows([parent, other], path)
    # the pair of an evaluation parent shares its sentences: the check finds it ...
    pairs = deletion_pairs([parent])
    index = OverlapIndex([parent])
    assert all(index.overlaps(p) is not None for p in pairs)
    assert {p.unit for p in pairs} == {parent.unit}, "a deletion pair carries its parent's unit"
    # ... and exclusion drops the parent before d2c: builds anything from it
    exclusion = Exclusion(OverlapIndex([parent]))
    rows, _, _ = resolve_set(f"d2c:{path}", exclude=exclusion)
    assert rows and all(r.meta["d2c_source"] == "fib-2" for r in rows)
    assert sum(exclusion.counts()[str(path)].values()) >= 2  # the parent, counted (and the total)


def test_overlap_report_counts_kinds_and_sources():
    evaluation = [row("e1", ARTICLE, "The council approved the new budget on Tuesday."),
                  row("e2", "A quiet street with two old oak trees and a small bakery on the corner.", "There is a bakery.")]
    train_a = [row("a1", ARTICLE, "Another claim that is long enough to count.")]
    train_b = [row("b1", "Nothing in common with anything here at all, really, none.", "The council approved the new budget on Tuesday.")]
    report = overlap_report(evaluation, [("a", train_a), ("b", train_b)], evaluation_name="eval")
    assert report.n_rows == 2 and report.n_contaminated == 1 and not report.clean
    assert report.by_source["a"]["document"]["rows"] == 1
    assert report.by_source["b"]["claim"]["first"][0][:2] == ["e1", "b1"]
    assert json.loads(json.dumps(report.to_json()))["contaminated_rows"]["any"] == 1


def test_sets_overlap_command(tmp_path, capsys):
    evaluation, train = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    write_rows([row("e1", ARTICLE, "The council approved the new budget on Tuesday.")], evaluation)
    write_rows([row("t1", ARTICLE.replace("Tuesday", "Monday"), "The council approved it.")], train)
    out = tmp_path / "overlap.json"
    assert main(["sets", "overlap", str(evaluation), "--against", str(train), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "rows with an overlap: 1 of 1" in printed and "sentence" in printed
    assert json.loads(out.read_text())["clean"] is False
    assert main(["sets", "overlap", str(evaluation), "--against", str(train), "--fail"]) == 1
    write_rows([row("t2", "An unrelated document about the weather in the mountains this week.", "It snowed.")], train)
    assert main(["sets", "overlap", str(evaluation), "--against", str(train), "--fail"]) == 0


def test_sets_overlap_out_lists_every_pair_and_clean_out_the_clean_rows(tmp_path, capsys):
    """More than the five example pairs a kind keeps: --out holds every pair, --clean-out the rows to keep."""
    sentences = [s.strip() + "." for s in ARTICLE.split(".") if s.strip()]
    evaluation = [row(f"e{i}", f"{sentences[i % len(sentences)]} Unique tail number {i} for this row only.", f"Claim number {i} about it.")
                  for i in range(12)]
    evaluation.append(row("clean-1", OTHER_ARTICLE, "The harbour will be dredged next summer."))
    train = [row("t1", ARTICLE, "The council approved the new budget on Tuesday.")]
    ev_path, train_path = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    write_rows(evaluation, ev_path)
    write_rows(train, train_path)
    out, clean = tmp_path / "overlap.json", tmp_path / "clean.jsonl"
    assert main(["sets", "overlap", str(ev_path), "--against", str(train_path), "--out", str(out), "--clean-out", str(clean)]) == 0
    found = json.loads(out.read_text())
    assert len(found["by_source"][str(train_path)]["sentence"]["first"]) == 5
    pairs = found["pairs"]
    assert len(pairs) == 12 and {p["evaluation_id"] for p in pairs} == {f"e{i}" for i in range(12)}
    assert all(p["training_id"] == "t1" and p["kind"] == "sentence" and p["training_set"] == str(train_path) for p in pairs)
    assert all(p["shared"] and p["shared"] in {normalise_text(s) for s in sentences} for p in pairs)
    assert [r.id for r in load_rows(clean).rows] == ["clean-1"]
    assert "wrote" in capsys.readouterr().out


def test_overlap_groups_join_rows_that_share_text_directly_or_through_others():
    a = row("a", ARTICLE, "The mayor praised the compromise.")
    b = row("b", ARTICLE, "Road repairs were postponed.")  # same document as a
    c = row("c", OTHER_ARTICLE, "Spending on libraries will rise by four percent next year, the treasurer said in a statement.")
    d = row("d", "Spending on libraries will rise by four percent next year, the treasurer said in a statement.",
            "Ferry tickets cost the same.")  # c's claim is a sentence of d's document; d shares nothing with a or b directly
    e = row("e", "A quiet street with two old oak trees and a small bakery on the corner.", "There is a bakery.")
    groups = [[r.id for r in g] for g in overlap_groups([a, b, c, d, e])]
    assert sorted(groups) == [["a", "b", "c", "d"], ["e"]], groups
    with pytest.raises(ValueError, match="not unique"):
        overlap_groups([a, a])


def _train_script():
    spec = importlib.util.spec_from_file_location("train_default_judge", ROOT / "benchmarks" / "train_default_judge.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason="needs the shared data folder ../shared/data")
def test_shipped_training_pool_is_clean_of_the_starter_and_of_its_held_out_rows(tmp_path):
    """The shipped recipe's pool, after exclusion, shares nothing with the starter set or its own held-out rows."""
    from judgelab.tuning import load_sources, split_sources

    script = _train_script()
    config = script.build_config(script.parser().parse_args(["--data", str(DATA), "--out", str(tmp_path)]))
    sources = load_sources(config)
    pools, held, counts = split_sources(sources, config)
    starter, _, _ = resolve_set(None)
    pool_sets = [(name, rows) for name, rows in pools.items() if rows]
    report = overlap_report(starter, pool_sets, evaluation_name="starter")
    assert report.contaminated == {k: 0 for k in report.contaminated}, report.by_source
    held_rows = [r for rows in held.values() for r in rows]
    report = overlap_report(held_rows, pool_sets, evaluation_name="held-out")
    assert report.clean, report.by_source
    assert sum(sum(s.excluded.values()) for s in sources) > 0, "the starter's rows come from these sets"
