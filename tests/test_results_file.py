"""benchmarks/results_file.py, the one writer of results files: provenance a reviewer can trace, no absolute
paths, and a tree that is dirty only when a source file differs from the commit (issue 63)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from results_file import command_line, machine, script_argv, scrub_paths, source_state, write_results  # noqa: E402


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


def test_the_command_names_the_script_from_the_repository_and_the_arguments_main_was_given(monkeypatch):
    script = ROOT / "benchmarks" / "bench_adapters.py"
    monkeypatch.setattr(sys, "argv", ["pytest", "-q", "tests"])
    assert command_line(script_argv(script, ["--limit", "8"])) == "python benchmarks/bench_adapters.py --limit 8"
    assert command_line(script_argv(script, [])) == "python benchmarks/bench_adapters.py"
    # Run as a script (argv None), the process's own arguments are the command's.
    monkeypatch.setattr(sys, "argv", [str(script), "--data", "DATA"])
    assert command_line(script_argv(script)) == "python benchmarks/bench_adapters.py --data DATA"


def test_cpu_flags_come_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("model name\t: Some CPU\nflags\t\t: fpu sse avx2 fma avx512f amx_tile\n", encoding="utf-8")
    facts = machine(cpuinfo)
    assert facts["cpu"] == "Some CPU" and facts["cpu_flags"] == ["avx2", "fma", "avx512f", "amx_tile"]


def test_the_longest_named_prefix_wins_and_home_becomes_tilde(tmp_path):
    text = scrub_paths(f"{tmp_path}/a and {tmp_path}/data/b and {Path.home()}/c",
                       {tmp_path: "ROOT", tmp_path / "data": "DATA"}, repo=tmp_path / "elsewhere")
    assert text == "ROOT/a and DATA/b and ~/c"


# Every benchmark that writes a results file writes it with write_results (ast and text only: nothing imported or run).

BENCHMARKS = ROOT / "benchmarks"
#: Benchmarks that still build their own provenance and write their results file by hand: none now. The list only
#: shrinks (a listed script that has moved fails the test until it is taken off); a new script starts on write_results.
NOT_YET_MOVED: frozenset[str] = frozenset()
#: A script writes a results file when it names the folder (``benchmarks/results``, ``"benchmarks" / "results"``),
#: takes a ``--results`` file, or a results file bears its name (``results/NAME.json``, ``results/NAME-*.json``:
#: an ``--out`` given on the command line).
_WRITES_RESULTS = re.compile(r"benchmarks/results|[\"']benchmarks[\"']\s*/\s*[\"']results[\"']|[\"']--results[\"']")
#: Provenance keys a script may not write itself: write_results records the command, commit and machine.
_OWN_PROVENANCE = frozenset({"made_by", "commit", "dirty", "cpu", "cpus", "machine", "versions"})


def _calls_write_results(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) == "write_results"
               for n in ast.walk(tree))


def _own_provenance_imports(tree: ast.AST) -> list[str]:
    """``from quick_start import commit`` and the like: provenance built by hand."""
    return [f"from {n.module} import {a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
            for a in n.names if n.module == "quick_start" and a.name in ("commit", "cpu_model")]


def _own_provenance_keys(tree: ast.AST) -> list[str]:
    return sorted({k.value for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys
                   if isinstance(k, ast.Constant) and k.value in _OWN_PROVENANCE})


def _writes_results(path: Path, source: str) -> bool:
    results = path.parent / "results"
    named = any(results.rglob(f"{path.stem}.json")) or any(results.rglob(f"{path.stem}-*.json"))
    return named or _WRITES_RESULTS.search(source) is not None


def hand_written_results(folder: Path, exempt: frozenset[str] = frozenset()) -> dict[str, str]:
    """``{script: what is wrong}`` for every script of ``folder`` (``results_file.py`` aside) that imports
    ``commit``/``cpu_model`` from quick_start, or, not ``exempt``, writes a results file without calling
    write_results or with provenance keys of its own."""
    problems = {}
    for path in sorted(folder.glob("*.py")):
        if path.name == "results_file.py":
            continue
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        wrong = _own_provenance_imports(tree)
        if path.name not in exempt and _writes_results(path, source):
            if not _calls_write_results(tree):
                wrong.append("writes a results file without write_results")
            wrong += [f"writes its own {key!r}" for key in _own_provenance_keys(tree)]
        if wrong:
            problems[path.name] = "; ".join(wrong)
    return problems


def test_every_benchmark_writes_its_results_file_with_write_results():
    assert hand_written_results(BENCHMARKS, exempt=NOT_YET_MOVED) == {}
    moved = {name for name in NOT_YET_MOVED if name not in hand_written_results(BENCHMARKS)}
    assert sorted(moved) == [], "these use write_results now: take them off NOT_YET_MOVED"


def test_the_check_catches_a_results_file_written_by_hand(tmp_path):
    (tmp_path / "old.py").write_text(
        'import json, sys\nfrom quick_start import commit, cpu_model\n'
        'def main(args):\n    args.results.write_text(json.dumps({"made_by": " ".join(sys.argv), "commit": commit(),\n'
        '        "cpu": cpu_model(), "runs": {}}))\np.add_argument("--results")\n', encoding="utf-8")
    (tmp_path / "by_hand.py").write_text('OUT = "benchmarks/results/x.json"\nopen(OUT, "w").write("{}")\n',
                                         encoding="utf-8")
    (tmp_path / "own_keys.py").write_text('write_results("benchmarks/results/x.json", {"cpus": 2, "runs": {}})\n',
                                          encoding="utf-8")
    (tmp_path / "new.py").write_text('from results_file import write_results\np.add_argument("--results")\n'
                                     'write_results(args.results, {"runs": {}}, scrub={args.run: "RUN"})\n',
                                     encoding="utf-8")
    (tmp_path / "no_results.py").write_text('open("policy_power.json", "w").write("{}")\n', encoding="utf-8")
    (tmp_path / "by_name.py").write_text('p.add_argument("--out")\nopen(args.out, "w").write("{}")\n', encoding="utf-8")
    (tmp_path / "results" / "sub").mkdir(parents=True)
    (tmp_path / "results" / "sub" / "by_name-run2.json").write_text("{}\n", encoding="utf-8")
    problems = hand_written_results(tmp_path)
    assert problems == {
        "old.py": "from quick_start import commit; from quick_start import cpu_model; writes a results file without "
                  "write_results; writes its own 'commit'; writes its own 'cpu'; writes its own 'made_by'",
        "by_hand.py": "writes a results file without write_results",
        "by_name.py": "writes a results file without write_results",
        "own_keys.py": "writes its own 'cpus'",
    }
    assert hand_written_results(tmp_path, exempt=frozenset({"old.py"})) == {
        "old.py": "from quick_start import commit; from quick_start import cpu_model",
        "by_hand.py": "writes a results file without write_results",
        "by_name.py": "writes a results file without write_results", "own_keys.py": "writes its own 'cpus'"}
