"""The starter set (calibration/starter.jsonl) holds what calibration/README.md and ATTRIBUTION.md say.

Its ``dev`` and ``test`` splits share no row, document, claim, long sentence or near-duplicate
document (``judgelab sets overlap``, as a user would run it); every row's licence is the licence
of its text; the headline test's rows are its own test rows; the counts the README gives are the
file's.
"""

from __future__ import annotations

import re
from pathlib import Path

from judgelab.calibration import LabelledRow, load_rows, write_rows
from judgelab.cli import main

ROOT = Path(__file__).resolve().parents[1]
STARTER = ROOT / "calibration" / "starter.jsonl"
HANDWRITTEN = ROOT / "calibration" / "starter_handwritten.jsonl"
HEADLINE = ROOT / "tests" / "data" / "headline_rows.jsonl"

#: The licence of each public group's text (ATTRIBUTION.md's table): Wikipedia and MultiNLI text.
PUBLIC_LICENCES = {"begin-cmu": "CC-BY-SA-3.0", "begin-wow": "CC-BY-SA-3.0", "mnli": "CC-BY-SA-3.0",
                   "fever-nli": "CC-BY-SA-3.0", "squad-relevancy": "CC-BY-SA-4.0"}


def _rows(path: Path) -> list[LabelledRow]:
    return list(load_rows(path).rows)


def test_dev_and_test_share_no_text(tmp_path, capsys):
    rows = _rows(STARTER)
    dev, test = tmp_path / "dev.jsonl", tmp_path / "test.jsonl"
    assert write_rows([r for r in rows if r.split == "dev"], dev) > 100
    assert write_rows([r for r in rows if r.split == "test"], test) > 100
    assert main(["sets", "overlap", str(test), "--against", str(dev), "--fail"]) == 0, capsys.readouterr().out
    assert "rows with an overlap: 0 of" in capsys.readouterr().out


def test_every_row_names_the_licence_of_its_text():
    rows = _rows(STARTER)
    hand = [r for r in rows if not r.id.startswith("qs-")]
    public = [r for r in rows if r.id.startswith("qs-")]
    assert {r.licence for r in hand} == {"Apache-2.0"}
    wrong = [(r.id, r.group, r.licence) for r in public if PUBLIC_LICENCES.get(r.group or "") != r.licence]
    assert not wrong, f"rows whose licence is not their text's (or from a set the package may not ship): {wrong[:5]}"
    quoting_reviews = [r.id for r in public if "critical response" in r.documents[0]]
    assert not quoting_reviews, f"CMU-DoG passages that quote Rotten Tomatoes: {quoting_reviews[:5]}"


def test_the_handwritten_rows_are_the_handwritten_file():
    starter = {r.id: r for r in _rows(STARTER) if not r.id.startswith("qs-")}
    hand = {r.id: r for r in _rows(HANDWRITTEN)}
    assert starter.keys() == hand.keys()
    for rid, r in hand.items():
        assert starter[rid].model_dump(exclude={"licence"}) == r.model_dump(exclude={"licence"}), rid


def test_the_headline_rows_are_starter_test_rows():
    starter = {r.id: r for r in _rows(STARTER)}
    headline = _rows(HEADLINE)
    assert len(headline) == 80
    for r in headline:
        assert r.id in starter and starter[r.id] == r and r.split == "test", r.id


def test_the_readme_counts_are_the_files():
    rows = _rows(STARTER)
    readme = (ROOT / "calibration" / "README.md").read_text(encoding="utf-8")
    held = re.search(r"It holds (\d+) rows", readme)
    assert held and int(held[1]) == len(rows), "calibration/README.md's row count is not the file's"
    for task in ("fact-check", "relevancy"):
        public = [r for r in rows if r.id.startswith("qs-") and r.task == task]
        assert f"* {len(public)} {task} rows" in readme, f"calibration/README.md's count of public {task} rows"
        test_rows = sum(1 for r in public if r.split == "test")
        assert f"({test_rows} `test` rows" in readme, f"calibration/README.md's count of public {task} test rows"


def test_the_gemma_terms_travel_with_the_adapter():
    """Section 3.1 of the Gemma Terms: every recipient of a Model Derivative gets a copy of them, and the Notice."""
    folder = ROOT / "models" / "gemma-3-270m-judge"
    terms = (folder / "GEMMA_TERMS.txt").read_text(encoding="utf-8")
    assert "3.1 Distribution and Redistribution" in terms and "3.2 Use Restrictions" in terms
    notice = "Gemma is provided under and subject to the Gemma Terms of Use found at ai.google.dev/gemma/terms"
    for path in (ROOT / "NOTICE", folder / "NOTICE"):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert notice in text and "GEMMA_TERMS.txt" in text, path
