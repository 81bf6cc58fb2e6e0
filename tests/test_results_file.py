"""benchmarks/results_file.py, the one writer of results files: provenance a reviewer can trace, no absolute
paths, and a tree that is dirty only when a source file differs from the commit (issue 63)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from results_file import machine, scrub_paths, source_state, write_results  # noqa: E402


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)


@pytest.fixture()
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "benchmarks" / "results").mkdir(parents=True)
    (root / "code.py").write_text("x = 1\n", encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "code.py")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_a_results_file_records_command_commit_machine_and_versions(repo, tmp_path):
    data = tmp_path / "shared" / "data"
    out = write_results(repo / "benchmarks" / "results" / "one.json",
                        {"set": f"wice:{data}/wice/dev.jsonl", "run": f"{repo}/runs/x", "stray": "/tmp/abc/def.json"},
                        scrub={data: "DATA"}, argv=["benchmarks/one.py", "--data", str(data)], repo=repo)
    record = json.loads(out.read_text(encoding="utf-8"))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    assert record["commit"] == head and record["dirty"] is False
    assert record["command"] == "python benchmarks/one.py --data DATA"
    assert record["set"] == "wice:DATA/wice/dev.jsonl" and record["run"] == "runs/x"
    assert record["stray"] == "…/def.json"
    assert str(tmp_path) not in out.read_text(encoding="utf-8")
    assert record["machine"]["cpu"] and isinstance(record["machine"]["cpu_flags"], list)
    assert record["machine"]["cores"] >= 1 and "judgelab" in record["versions"]


def test_results_files_do_not_make_the_tree_dirty_but_sources_do(repo):
    (repo / "benchmarks" / "results" / "first.json").write_text("{}\n", encoding="utf-8")
    assert source_state(repo)["dirty"] is False
    (repo / "code.py").write_text("x = 2\n", encoding="utf-8")
    assert source_state(repo)["dirty"] is True
    _git(repo, "checkout", "code.py")
    (repo / "new_module.py").write_text("y = 1\n", encoding="utf-8")
    assert source_state(repo)["dirty"] is True


def test_outside_a_repository_the_commit_is_unknown_not_invented(tmp_path):
    assert source_state(tmp_path) == {"commit": None, "dirty": None}


def test_figures_may_not_overwrite_provenance(repo):
    with pytest.raises(ValueError, match="commit"):
        write_results(repo / "benchmarks" / "results" / "x.json", {"commit": "abc"}, repo=repo)


def test_cpu_flags_come_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("model name\t: Some CPU\nflags\t\t: fpu sse avx2 fma avx512f amx_tile\n", encoding="utf-8")
    facts = machine(cpuinfo)
    assert facts["cpu"] == "Some CPU" and facts["cpu_flags"] == ["avx2", "fma", "avx512f", "amx_tile"]


def test_the_longest_named_prefix_wins_and_home_becomes_tilde(tmp_path):
    text = scrub_paths(f"{tmp_path}/a and {tmp_path}/data/b and {Path.home()}/c",
                       {tmp_path: "ROOT", tmp_path / "data": "DATA"}, repo=tmp_path / "elsewhere")
    assert text == "ROOT/a and DATA/b and ~/c"
