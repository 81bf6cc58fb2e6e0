"""Hard-negative generators (issue 38): ``num:``, ``swap:`` and ``partial:`` pairs on tiny hand-written rows."""

from __future__ import annotations

import re

import pytest

from judgelab.calibration import (
    GENERATORS,
    Exclusion,
    LabelledRow,
    OverlapIndex,
    generated_from,
    number_pairs,
    partial_pairs,
    resolve_set,
    shortcut_baselines,
    swap_pairs,
    write_rows,
)
from judgelab.errors import JudgelabError


def stated_values(text: str) -> set[str]:
    """Numbers by value (``1,500`` -> ``1500``), and words (lower case), that ``text`` states."""
    numbers = {str(float(n.replace(",", ""))) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}
    return numbers | {w.lower() for w in re.findall(r"[A-Za-z]+", text)}


def row(rid: str, document: str, claim: str, label: int = 1, unit: str | None = None) -> LabelledRow:
    return LabelledRow(id=rid, task="fact-check", documents=[document], response=claim, label=label,
                       meta={"pair": unit} if unit else {})


REPORT = ("Acme Corp said revenue rose 12% to $1,500 million in 2019. The plant in Leeds closed on May 20. "
          "Chief executive Jane Smith met Globex Inc, whose chairman Tom Brown said two sites would follow.")


def _pair(rows: list[LabelledRow]) -> tuple[LabelledRow, LabelledRow]:
    assert len(rows) == 2
    return rows[0], rows[1]


def test_num_changes_one_figure_to_a_value_the_document_never_states():
    parent = row("r1", REPORT, "Revenue rose to $1,500 million in 2019.", unit="doc-7")
    kept, edited = _pair(number_pairs([parent]))
    assert (kept.label, edited.label) == (1, 0)
    assert kept.response == parent.response and kept.documents == edited.documents == parent.documents
    assert kept.unit == edited.unit == "doc-7" and kept.id == "num-r1-kept" and edited.id == "num-r1-edited"
    assert edited.meta["generator"] == "num" and edited.meta["parent"] == "r1" and generated_from(edited) == ("num", "r1")
    old, new = edited.meta["from"], edited.meta["to"]
    assert old in ("1,500", "2019") and old != new
    assert edited.response == parent.response.replace(old, new)
    # same format and magnitude: separators, digits and trailing zeros kept
    assert len(new) == len(old) and ("," in new) == ("," in old) and (new.endswith("00") == old.endswith("00"))
    # the new value is stated nowhere in the document, so the edited claim is unsupported
    assert not stated_values(new) & stated_values(REPORT)


def test_num_edits_dates_percentages_and_number_words():
    kinds = set()
    for i, claim in enumerate(["Revenue rose 12% that year.", "The plant closed on May 20.",
                               "Tom Brown said two sites would follow.", "Revenue rose in 2019."]):
        kept, edited = _pair(number_pairs([row(f"k{i}", REPORT, claim)]))
        kinds.add(edited.meta["edit"])
        assert not stated_values(edited.meta["to"]) & stated_values(REPORT)
    assert kinds >= {"percent", "word", "year"} and kinds & {"day", "month"}
    kept, edited = _pair(number_pairs([row("p", "Turnout was 100% in 2001 and 99% in 2005.", "Turnout was 99%.")]))
    assert int(edited.meta["to"]) <= 100  # a percentage stays a percentage


def test_num_skips_rows_without_a_figure_the_document_states():
    assert number_pairs([row("a", REPORT, "Acme Corp met Globex Inc.")]) == []
    assert number_pairs([row("b", REPORT, "Revenue rose to $1,700 million.")]) == []  # the claim's figure is not in it
    assert number_pairs([row("c", REPORT, "Revenue rose 12%.", label=0)]) == []  # only supported rows
    every = "Sites: 1, 2, 3, 4, 5, 6, 7, 8, 9."
    assert number_pairs([row("d", every, "There were 5 sites.")]) == []  # every plausible value is stated


def test_swap_replaces_an_entity_with_another_of_the_same_document():
    parent = row("s1", REPORT, "Jane Smith met Globex Inc.")
    kept, edited = _pair(swap_pairs([parent]))
    assert kept.response == parent.response and edited.label == 0 and edited.meta["edit"] == "entity"
    assert edited.meta["from"] in ("Jane Smith", "Globex Inc") and edited.meta["to"] in REPORT
    assert edited.meta["to"] not in parent.response and len(edited.meta["to"].split()) == 2
    assert edited.response == parent.response.replace(edited.meta["from"], edited.meta["to"])


def test_swap_flips_a_direction_word_the_document_holds_and_skips_rows_without_an_edit():
    kept, edited = _pair(swap_pairs([row("d1", "Exports rose sharply last year.", "exports rose.")]))
    assert (edited.meta["from"], edited.meta["to"], edited.response) == ("rose", "fell", "exports fell.")
    assert swap_pairs([row("d2", "Prices rose, then fell.", "prices rose.")]) == []  # the opposite is stated too
    assert swap_pairs([row("d3", "the plant closed.", "the plant closed.")]) == []  # no name, no direction word


def _partial_set() -> list[LabelledRow]:
    shared = "The town library opened in 1932. It holds forty thousand books and a map room."
    return [
        row("a1", shared, "The town library opened in 1932", unit="town"),
        row("a2", shared, "The library holds forty thousand books and a map room", unit="town"),
        row("b1", "Ferries cross the harbour every hour in the long summer.",
            "Ferries cross the harbour every hour in the summer", unit="harbour"),
        row("c1", "The orchestra rehearses on Tuesday evenings in the old hall.",
            "The orchestra rehearses on Tuesday evenings in the old hall", unit="orchestra"),
    ]


def test_partial_joins_a_clause_the_document_does_not_hold_and_a_supported_twin():
    rows = _partial_set()
    pairs = partial_pairs(rows)
    by_parent: dict[str, list[LabelledRow]] = {}
    for r in pairs:
        by_parent.setdefault(r.meta["parent"], []).append(r)
    # only the town's document has a second supported claim; a2's sibling (6 words) has no foreign clause of
    # about its length (9-10 words), so only a1 makes a pair
    assert set(by_parent) == {"a1"}
    kept, edited = by_parent["a1"]
    assert (kept.label, edited.label, kept.unit, edited.unit) == (1, 0, "town", "town")
    assert kept.response == "The town library opened in 1932, and the library holds forty thousand books and a map room."
    assert edited.response.startswith("The town library opened in 1932, and ")
    assert edited.meta["clause_from"] in ("b1", "c1") and edited.meta["clause"] in edited.response
    original = partial_pairs(rows, twin="original")
    assert {r.meta["parent"] for r in original} == {"a1", "a2", "b1", "c1"}
    assert [r.response for r in original if r.id == "partial-b1-kept"] == ["Ferries cross the harbour every hour in the summer"]


def test_partial_never_takes_a_clause_the_document_holds():
    doc = "Ferries cross the harbour every hour. The orchestra rehearses downtown."
    rows = [row("x", doc, "Ferries cross the harbour every hour", unit="u1"),
            row("y", "The orchestra rehearses on Tuesday evenings downtown.", "The orchestra rehearses downtown",
                unit="u2")]
    # y's clause is held by x's document (every content word): x gets no pair; x's clause is foreign to y's
    assert {r.meta["parent"] for r in partial_pairs(rows, twin="original")} == {"y"}


def test_generators_are_deterministic_and_independent_of_row_order():
    rows = [row(f"r{i}", REPORT, c) for i, c in enumerate(
        ["Revenue rose to $1,500 million in 2019.", "Jane Smith met Globex Inc.", "Revenue rose 12% that year."])]
    for generate in (number_pairs, swap_pairs):
        first = generate(rows)
        assert first and first == generate(list(rows))
        assert sorted(first, key=lambda r: r.id) == sorted(generate(rows[::-1]), key=lambda r: r.id)
    assert partial_pairs(_partial_set()) == partial_pairs(_partial_set())


def test_prefixes_resolve_nest_and_apply_the_exclusion_first(tmp_path):
    path = tmp_path / "rows.jsonl"
    parent = row("p1", REPORT, "Revenue rose to $1,500 million in 2019.")
    other = row("p2", "Output rose 4% in 1999 at the Hull plant.", "Output rose 4% in 1999.")
    write_rows([parent, other], path)
    rows, desc, _ = resolve_set(f"num:{path}")
    assert desc == f"num:{path}" and {r.meta["parent"] for r in rows} == {"p1", "p2"}
    assert set(GENERATORS) >= {"d2c", "num", "swap", "partial"}
    exclusion = Exclusion(OverlapIndex([parent]))
    rows, _, _ = resolve_set(f"num:{path}", exclude=exclusion)
    assert {r.meta["parent"] for r in rows} == {"p2"}, "an excluded parent makes no pair"
    nested, _, _ = resolve_set(f"swap:num:{path}")  # the generated rows are themselves a set
    assert nested == [] or all(r.meta["generator"] == "swap" for r in nested)
    with pytest.raises(JudgelabError, match="generators .*num, swap, partial"):
        resolve_set("nosuch:thing")


def test_shortcut_figures_computed_on_generated_rows():
    # years 7 apart: no edited claim repeats another row's claim (which would join their units)
    rows = [row(f"b{i}", f"The bridge at Site {i} opened in {1800 + 7 * i}; its span is {500 + 10 * i} metres.",
                f"The bridge opened in {1800 + 7 * i}.", unit=f"bridge-{i}") for i in range(24)]
    pairs = number_pairs(rows)
    assert len(pairs) == 48
    report = shortcut_baselines(pairs, n_resamples=200)
    assert report.n == 48
    # twins share their document and their claim's length: neither length can give the label away
    assert report.document_length.estimate == pytest.approx(0.5) and report.claim_length.estimate == pytest.approx(0.5)
    assert report.claim_only.low < 0.5 < report.claim_only.high or abs(report.claim_only.estimate - 0.5) < 0.2
