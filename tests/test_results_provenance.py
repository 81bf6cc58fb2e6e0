"""Every results file a page quotes says what made it: the command, the commit (and whether the tree was
dirty) and the CPU with its instruction-set flags, as ``benchmarks/results_file.py`` writes them.

Files written before that writer record less (some only the figures). They are listed, one per line,
in ``tests/data/untraced_results.txt``; the list can only shrink: a listed file that is rewritten with
its provenance fails until its line is removed, and a quoted file missing from the list must trace.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
UNTRACED = ROOT / "tests" / "data" / "untraced_results.txt"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "calibration" / "README.md",
         *sorted((ROOT / "models").glob("*/report.md"))]
_QUOTED = re.compile(r"<!-- (?:fig|output) (\S+) ")


def traced(data: Any) -> bool:
    """Whether a results file names its command, commit, dirty flag and the CPU's flags."""
    return (isinstance(data, dict) and bool(data.get("command")) and bool(data.get("commit")) and "dirty" in data
            and isinstance(data.get("machine"), dict) and "cpu_flags" in data["machine"])


def _quoted() -> set[str]:
    return {m[1] for page in PAGES for m in _QUOTED.finditer(page.read_text(encoding="utf-8"))}


def _untraced_list() -> set[str]:
    return {line.strip() for line in UNTRACED.read_text(encoding="utf-8").splitlines() if line.strip()}


def test_every_quoted_results_file_traces_or_is_listed_from_before_the_writer():
    listed = _untraced_list()
    state = {name: traced(json.loads((RESULTS / name).read_text(encoding="utf-8"))) for name in _quoted()}
    missing = sorted(n for n, ok in state.items() if not ok and n not in listed)
    assert not missing, (f"quoted results files that do not say their command, commit, dirty flag and CPU flags: "
                         f"{missing}. Write them with benchmarks/results_file.write_results.")
    now_traced = sorted(n for n in listed if state.get(n))
    assert not now_traced, f"these now trace: take them off {UNTRACED.relative_to(ROOT)}: {now_traced}"
    unquoted = sorted(listed - set(state))
    assert not unquoted, f"no page quotes these any more: take them off {UNTRACED.relative_to(ROOT)}: {unquoted}"


def test_the_writer_output_traces(tmp_path):
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from results_file import write_results

    path = write_results(tmp_path / "r.json", {"auroc": 0.8}, argv=["benchmarks/x.py"])
    assert traced(json.loads(path.read_text(encoding="utf-8")))
    assert not traced({"auroc": 0.8, "commit": "abc"})
