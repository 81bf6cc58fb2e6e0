"""Every marked figure in README.md, docs/, calibration/README.md and models/*/report.md equals the results file it names.

A measured figure in the Markdown carries an invisible marker right after it,
``0.728<!-- fig quickstart.json tasks.fact-check.auroc -->``: the file (under
``benchmarks/results/``) and the key path (dots; list indices as numbers; a key may hold spaces). The
figure must equal the file's value rounded to the figure's decimals. Output
pasted as printed is marked before its fenced block,
``<!-- output quickstart.json output -->``, and must equal the value exactly.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "calibration" / "README.md",
         *sorted((ROOT / "models").glob("*/report.md"))]

FIGURE = re.compile(r"(?P<num>[+-]?\d[\d,]*(?:\.\d+)?)(?P<unit>%|x|\s?s)?\**\s*<!-- fig (?P<file>\S+) (?P<key>[^\n]+?) -->")
OUTPUT = re.compile(r"<!-- output (?P<file>\S+) (?P<key>\S+) -->\s*\n```[^\n]*\n(?P<body>.*?)\n```", re.S)
ANY_MARKER = re.compile(r"<!-- (fig|output) ")


def lookup(results: Path, file: str, key: str) -> Any:
    value: Any = json.loads((results / file).read_text(encoding="utf-8"))
    parts = key.split(".")
    while parts:
        if isinstance(value, list):
            value = value[int(parts.pop(0))]
            continue
        n = 1  # a key may itself hold dots ("score 0.6-1"): take the shortest run of parts that is a key
        while ".".join(parts[:n]) not in value and n < len(parts):
            n += 1
        value = value[".".join(parts[:n])]
        del parts[:n]
    return value


def check_markdown(text: str, results: Path) -> tuple[int, list[str]]:
    """(markers checked, problems) of one page."""
    problems, checked = [], 0
    for m in FIGURE.finditer(text):
        checked += 1
        where = f"{m['num']} ({m['file']} {m['key']})"
        try:
            value = float(lookup(results, m["file"], m["key"]))
        except (OSError, KeyError, IndexError, ValueError, TypeError) as exc:
            problems.append(f"{where}: cannot read the value: {exc!r}")
            continue
        shown = float(m["num"].replace(",", ""))
        decimals = len(m["num"].partition(".")[2])
        if abs(round(value, decimals) - shown) > 0.5 * 10 ** -decimals + 1e-12:
            problems.append(f"{where}: the file says {value!r}")
    for m in OUTPUT.finditer(text):
        checked += 1
        try:
            value = lookup(results, m["file"], m["key"])
        except (OSError, KeyError, IndexError) as exc:
            problems.append(f"output {m['file']} {m['key']}: cannot read the value: {exc!r}")
            continue
        if m["body"] != str(value).rstrip("\n"):
            problems.append(f"output {m['file']} {m['key']}: the pasted block differs from the file")
    markers = len(ANY_MARKER.findall(text))
    if markers != checked:
        problems.append(f"{markers - checked} marker(s) not attached to a figure or a fenced block")
    return checked, problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_marked_figures_match_their_results_files(page):
    _, problems = check_markdown(page.read_text(encoding="utf-8"), RESULTS)
    assert not problems, f"{page.relative_to(ROOT)}: " + "; ".join(problems)


def test_the_readme_quick_start_is_marked():
    checked, _ = check_markdown((ROOT / "README.md").read_text(encoding="utf-8"), RESULTS)
    assert checked >= 5


def test_a_figure_changed_by_hand_fails(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps({"a": {"auroc": 0.7281, "ci": [0.672, 0.776]}, "out": "x 1\ny"}))
    good = ("AUROC 0.728<!-- fig r.json a.auroc --> [0.67<!-- fig r.json a.ci.0 -->]\n"
            "<!-- output r.json out -->\n```\nx 1\ny\n```\n")
    assert check_markdown(good, tmp_path) == (3, [])
    assert check_markdown(good.replace("0.728", "0.738"), tmp_path)[1]
    assert check_markdown(good.replace("0.67", "0.68"), tmp_path)[1]
    assert check_markdown(good.replace("x 1\ny", "x 1\nz"), tmp_path)[1]
    assert check_markdown("AUROC 0.73<!-- fig r.json a.missing -->", tmp_path)[1]
    assert check_markdown("AUROC high <!-- fig r.json a.auroc -->", tmp_path)[1]


def test_a_retrained_judges_report_holds_every_figure_to_its_results_file(tmp_path):
    """``benchmarks/training_record.py --report`` marks each figure of a tuning report to the results file."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import training_record

    run, results, model = tmp_path / "run", tmp_path / "results", tmp_path / "models" / "judge"
    run.mkdir()
    (run / "PROVENANCE.json").write_text((ROOT / "tests" / "data" / "tuning_provenance.json").read_text())
    (run / "losses.json").write_text(json.dumps([[1, 0.7], [2, 0.6], [3, 0.5]]), encoding="utf-8")
    assert training_record.main([str(run), "--results", str(results / "tuning" / "x-training.json"),
                                 "--results-root", str(results), "--report", str(model)]) == 0
    text = (model / "report.md").read_text(encoding="utf-8")
    checked, problems = check_markdown(text, results)
    assert not problems
    assert checked == 4 + 2 * 3 * 3  # steps, tokens, seconds, tokens/s; 3 scores x (2 scored rows + overall) x 2
    assert "tuning/x-training.json training.evaluations.1.sources.squad-relevancy:train-v1.1.auroc" in text
    with pytest.raises(SystemExit, match="must lie under"):  # a marker must name a file under the results root
        training_record.main([str(run), "--results", str(tmp_path / "elsewhere.json"), "--results-root",
                              str(results), "--report", str(tmp_path / "other")])
    assert not (tmp_path / "other").exists() and not (tmp_path / "elsewhere.json").exists()
