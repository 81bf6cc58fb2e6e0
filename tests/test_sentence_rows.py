"""Sentence rows (``sent:SET``): one claim sentence against the window decomposition gives it, labelled from its parent."""

from __future__ import annotations

import pytest

from judgelab.calibration import Exclusion, LabelledRow, OverlapIndex, deletion_pairs, resolve_set, sentence_rows, write_rows
from judgelab.evaluators import build_evaluator, evaluator_config, plan_checks

SENTENCES = [
    "The Harbour Bridge was built by the Dorman Long company. ",
    "Construction began in 1924 and took eight years. ",
    "The bridge opened to traffic in March 1932. ",
    "Premier Jack Lang cut the ribbon at the opening. ",
    "Francis de Groot slashed the ribbon first on horseback. ",
    "The arch spans 503 metres across the harbour. ",
    "Painting the steel requires 80,000 litres of paint. ",
    "Tourists can climb the arch with guides today.",
]
DOCUMENT = "".join(SENTENCES)


def _row(claim: str, label: int = 1, *, id: str = "r1", document: str = DOCUMENT, **meta) -> LabelledRow:
    return LabelledRow(id=id, task="fact-check", documents=[document], response=claim, label=label,
                       licence="CC-BY-SA-4.0", meta=meta)


def _deleted(claim: str, deleted: list[int]) -> LabelledRow:
    """A deletion negative as ``deletion_pairs`` writes it: the document without ``deleted``, which meta lists."""
    document = "".join(s for i, s in enumerate(SENTENCES) if i not in deleted).strip()
    return _row(claim, 0, id="d2c-p-deleted", document=document, pair="doc-7", d2c_source="p", d2c_key="k",
                deleted=[SENTENCES[i].strip() for i in deleted])


def test_each_row_is_the_decomposition_prompt_of_its_sentence_best_window(judge_model):
    """Rendered by the whole-claim evaluator, a sentence row is the prompt decomposition sends for its best window."""
    parent = _row("The bridge opened in 1932. Jack Lang cut the ribbon. The arch spans 503 metres.")
    decomposed = build_evaluator("fact-checking-sentences", judge_model).prompts_for(parent.to_request())
    whole = build_evaluator("fact-checking", judge_model)
    rows = sentence_rows([parent])
    window, top = evaluator_config("fact-checking-sentences").decomposition
    assert (window, top) == (3, 3) and len(decomposed) == 3 * top  # 8 sentences: 3 windows per claim sentence
    assert [r.response for r in rows] == ["The bridge opened in 1932.", "Jack Lang cut the ribbon.",
                                          "The arch spans 503 metres."]
    for i, row in enumerate(rows):
        assert whole.prompts_for(row.to_request()) == [decomposed[top * i]]
    plan = plan_checks(parent.response, DOCUMENT, window=window, top=top, max_tokens=10_000, count=len)
    assert [r.documents[0] for r in rows] == [plan.checks[top * i].evidence for i in range(3)]
    # the first window holding all of the sentence's words (ties go to the earlier window, as the plan has it)
    assert rows[0].documents[0] == "".join(SENTENCES[0:3]).strip() and rows[0].meta["window_start"] == 0
    assert rows[2].meta["window_start"] == 3 and "503 metres" in rows[2].documents[0]


def test_a_supported_parent_gives_every_sentence_label_1_and_keeps_its_unit_and_licence():
    parent = _row("The bridge opened in 1932. Jack Lang cut the ribbon.", pair="doc-7")
    rows = sentence_rows([parent])
    assert [(r.id, r.label, r.meta["sent_rule"]) for r in rows] == [
        ("sent-r1-0", 1, "supported-parent"), ("sent-r1-1", 1, "supported-parent")]
    assert {r.unit for r in rows} == {"doc-7"} and {r.licence for r in rows} == {"CC-BY-SA-4.0"}
    assert all(r.meta["sent_source"] == "r1" and r.meta["sentences"] == 2 for r in rows)
    lone = sentence_rows([_row("The bridge opened in 1932.", id="lone")])
    assert [r.unit for r in lone] == ["lone"]  # a parent without a pair is its own unit, and so are its sentences


def test_a_deletion_negative_labels_the_sentence_that_lost_its_support_and_skips_the_ambiguous():
    claim = "The bridge opened in 1932. Jack Lang cut the ribbon. Tourists climb the bridge arch."
    rows = sentence_rows([_deleted(claim, [2])])
    # 1: "bridge" survives in sentence 0 only, "opened" and "1932" are gone -> 0;
    # 2: shares no word with the deleted sentence -> 1;  3: lost "bridge" only, still held elsewhere -> skipped
    assert [(r.response, r.label, r.meta["sent_rule"]) for r in rows] == [
        ("The bridge opened in 1932.", 0, "support-deleted"), ("Jack Lang cut the ribbon.", 1, "support-kept")]
    assert {r.unit for r in rows} == {"doc-7"}
    assert "1932" not in rows[0].documents[0]


def test_rows_from_real_deletion_pairs_keep_the_parents_unit():
    parent = _row("The bridge opened to traffic in March 1932.", id="p", pair="doc-7")
    pairs = deletion_pairs([parent])
    assert [r.label for r in pairs] == [1, 0]
    rows = sentence_rows(pairs)
    assert [(r.label, r.meta["sent_rule"]) for r in rows] == [(1, "supported-parent"), (0, "support-deleted")]
    assert {r.unit for r in rows} == {parent.unit} == {r.unit for r in pairs}


def test_an_edited_negative_labels_only_the_sentence_that_holds_the_edit():
    claim = "The bridge opened in 1934. Jack Lang cut the ribbon."
    edited = sentence_rows([_row(claim, 0, id="num-1", to="1934", pair="doc-7")])
    assert [(r.response, r.label, r.meta["sent_rule"]) for r in edited] == [
        ("The bridge opened in 1934.", 0, "edited")]
    whole_sentence = sentence_rows([_row(claim, 0, edited_sentence="Jack Lang cut the ribbon.")])
    assert [r.response for r in whole_sentence] == ["Jack Lang cut the ribbon."]
    # the edit must be whole words in exactly one sentence: "193" is not in "1934", "bridge" is in both
    assert sentence_rows([_row(claim, 0, to="193")]) == []
    assert sentence_rows([_row("The bridge opened in 1934. The bridge is steel.", 0, edited="bridge")]) == []
    # the supported twin (label 1) gives all its sentences, whatever its meta says
    assert [r.label for r in sentence_rows([_row(claim, 1, to="1934")])] == [1, 1]


def test_an_unsupported_parent_of_one_sentence_is_label_0_and_of_several_is_skipped():
    assert [(r.label, r.meta["sent_rule"]) for r in sentence_rows([_row("The bridge opened in 1950.", 0)])] == [
        (0, "one-sentence-negative")]
    assert sentence_rows([_row("The bridge opened in 1950. Jack Lang cut the ribbon.", 0)]) == []


def test_sentences_the_plan_cannot_locate_and_other_tasks_are_skipped():
    rows = sentence_rows([_row("The bridge opened in 1932. It was so.")])
    assert [r.response for r in rows] == ["The bridge opened in 1932."]
    relevancy = LabelledRow(id="q", task="relevancy", user_text="When?", documents=[DOCUMENT],
                            response="In 1932.", label=1)
    assert sentence_rows([relevancy]) == []


def test_sent_set_spec_is_deterministic_and_generates_after_exclusion(tmp_path):
    parents = [_row("The bridge opened in 1932. Jack Lang cut the ribbon.", id="a", pair="doc-1"),
               _row("The arch spans 900 metres.", 0, id="b", pair="doc-1",
                    document="The arch spans 503 metres. It is steel. It is grey. It was painted in 1932.")]
    path = tmp_path / "set.jsonl"
    write_rows(parents, path)
    first, desc, _ = resolve_set(f"sent:{path}")
    again, _, _ = resolve_set(f"sent:{path}")
    assert desc == f"sent:{path}" and [r.model_dump() for r in first] == [r.model_dump() for r in again]
    assert [r.id for r in first] == ["sent-a-0", "sent-a-1", "sent-b-0"] and [r.label for r in first] == [1, 1, 0]
    exclusion = Exclusion(OverlapIndex([parents[1]]))
    kept, _, _ = resolve_set(f"sent:{path}", exclude=exclusion)
    assert [r.id for r in kept] == ["sent-a-0", "sent-a-1"]  # the excluded parent gives no sentence row
    assert sum(exclusion.dropped[str(path)].values()) == 1
    nested, _, _ = resolve_set(f"sent:d2c:{path}")
    assert {r.unit for r in nested} <= {"doc-1"}


def test_held_out_split_holds_sentence_rows_out_with_their_parents(tmp_path):
    from judgelab.tuning import TuneConfig, heldout_split

    parents = []
    for k in range(12):
        parents.append(_row("The bridge opened in 1932. Jack Lang cut the ribbon.", id=f"p{k}", pair=f"doc-{k}"))
        parents.append(_row(f"The arch spans {600 + k} metres.", 0, id=f"n{k}", pair=f"doc-{k}"))
    path = tmp_path / "set.jsonl"
    write_rows(parents, path)
    held = heldout_split(TuneConfig(sets=(str(path), f"sent:{path}"), out=str(tmp_path / "run"), heldout=0.3))
    parent_units = {r.unit for r in held["set"]}
    assert parent_units and parent_units == {r.unit for r in held["sent:set"]}


@pytest.mark.parametrize("window,top", [(2, 1), (3, 3)])
def test_window_and_top_follow_the_plan_when_given(window, top):
    parent = _row("The arch spans 503 metres.")
    (row,) = sentence_rows([parent], window=window, top=top)
    plan = plan_checks(parent.response, DOCUMENT, window=window, top=top, max_tokens=10_000, count=len)
    assert row.documents == [plan.checks[0].evidence] and len(plan.checks) == top
