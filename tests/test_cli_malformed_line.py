"""Every command that reads a rows file, over a file with one malformed line: one line naming file:line, exit 2.

Each case runs the real ``judgelab`` entry point in a fresh interpreter. The malformed line is
line 3 of 5, so a reader that stops early, skips it or only checks the last line is caught.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
BAD = '{"id": "r2", "task": "fact-check", "documents": ["d"], "response": '  # cut off: not JSON


def _judgelab(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)}
    code = "import sys; from judgelab.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)


def _row(i: int, *, label: bool = True) -> dict:
    row = {"id": f"r{i}", "task": "fact-check", "documents": ["The sky is blue."], "response": f"Claim {i}."}
    return {**row, "label": i % 2} if label else row


def _record(i: int) -> dict:
    return {"id": f"r{i}", "task": "fact-check", "label": i % 2, "score": 0.2 + 0.6 * (i % 2),
            "model": "gemma-3-270m", "spec_hash": "s", "evaluator": "FactCheckingEvaluator"}


def _lines(path: Path, objs: list[dict], *, bad_at: int | None = None) -> Path:
    lines = [json.dumps(o) for o in objs]
    if bad_at is not None:
        lines[bad_at - 1] = BAD
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("malformed")
    (d / "base").mkdir()
    return {
        "rows": _lines(d / "rows.jsonl", [_row(i) for i in range(5)], bad_at=3),
        "traffic": _lines(d / "traffic.jsonl", [_row(i, label=False) for i in range(5)], bad_at=3),
        "good_traffic": _lines(d / "good_traffic.jsonl", [_row(i, label=False) for i in range(5)]),
        "scores": _lines(d / "scores.jsonl", [_record(i) for i in range(5)], bad_at=3),
        "base": _lines(d / "base" / "scores.jsonl", [_record(i) for i in range(5)]).parent,
        "out": d / "out",
    }


CASES = {
    "sets validate": lambda f: (["sets", "validate", f["rows"]], "rows"),
    "calibrate --set": lambda f: (["calibrate", "--set", f["rows"], "--out", f["out"] / "c", "--model",
                                   "/nonexistent.gguf", "--no-progress"], "rows"),
    "stress --set": lambda f: (["stress", "--set", f["rows"], "--out", f["out"] / "s", "--model", "/nonexistent.gguf",
                                "--no-progress"], "rows"),
    "gate --set": lambda f: (["gate", f["base"], "--set", f["rows"], "--out", f["out"] / "g"], "rows"),
    "gate BASELINE_RUN": lambda f: (["gate", f["scores"], "--set", f["base"]], "scores"),
    "estimate --labelled": lambda f: (["estimate", "--run", f["base"], "--labelled", f["rows"], "--unlabelled",
                                       f["good_traffic"], "--out", f["out"] / "e1"], "rows"),
    "estimate --unlabelled": lambda f: (["estimate", "--run", f["base"], "--labelled", f["base"], "--unlabelled",
                                         f["traffic"], "--out", f["out"] / "e2"], "traffic"),
    "compare RUN_A": lambda f: (["compare", f["scores"], f["base"]], "scores"),
    "compare RUN_B": lambda f: (["compare", f["base"], f["scores"]], "scores"),
    "policy RUN": lambda f: (["policy", f["scores"], "--out", f["out"] / "policy.json"], "scores"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_malformed_line_is_one_line_naming_file_and_line(case, files):
    args, which = CASES[case](files)
    proc = _judgelab(*map(str, args))
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    # the baseline is a bare scores folder: a note that it is thresholded at 0.5 may come first
    lines = [line for line in proc.stderr.strip().splitlines() if "no metrics.json beside" not in line]
    err = "\n".join(lines)
    assert "Traceback" not in err and len(lines) == 1, proc.stderr
    assert f"{files[which]}:3" in err, err
    assert err.startswith(f"judgelab {args[0]}: error: "), err
