"""``benchmarks/same_run.py``: two calibrate folders are the same run, but for metrics.json's version."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLD_RUN = ROOT / "tests" / "data" / "runs-c47826c"


def _same_run(a: Path, b: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "same_run.py"), str(a), str(b)],
                          capture_output=True, text=True, check=False)


def _copy(tmp_path: Path, name: str, edit=None) -> Path:
    run = tmp_path / name
    shutil.copytree(OLD_RUN, run)
    if edit is not None:
        doc = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
        edit(doc)
        (run / "metrics.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return run


def test_the_same_files_are_identical(tmp_path):
    proc = _same_run(_copy(tmp_path, "a"), _copy(tmp_path, "b"))
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1].startswith("IDENTICAL: 12 records")


def test_only_the_version_field_differing_is_identical_and_says_so(tmp_path):
    proc = _same_run(_copy(tmp_path, "a"), _copy(tmp_path, "b", lambda d: d.update(version=2)))
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[-1].startswith("IDENTICAL (but for the version field: A has none, B has 2)")


def test_a_changed_figure_is_different_and_named_by_its_path(tmp_path):
    def edit(d):
        d.update(version=2)
        d["tasks"]["fact-check"]["heldout"]["auroc"]["estimate"] = 0.99

    proc = _same_run(_copy(tmp_path, "a"), _copy(tmp_path, "b", edit))
    assert proc.returncode == 1 and proc.stdout.splitlines()[-1].startswith("DIFFERENT")
    assert ".tasks.fact-check.heldout.auroc.estimate:" in proc.stdout and "version" not in proc.stdout.splitlines()[0]


def test_two_nan_thresholds_are_the_same(tmp_path):
    def nan(d):
        d["tasks"]["fact-check"]["threshold"]["value"] = float("nan")

    proc = _same_run(_copy(tmp_path, "a", nan), _copy(tmp_path, "b", nan))
    assert proc.returncode == 0, proc.stdout
