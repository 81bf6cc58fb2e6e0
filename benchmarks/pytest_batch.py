"""The pytest plugin: the same 100 fact checks through ``judge_batch`` and one by one, in one pytest run.

Run from the repository root::

    python benchmarks/pytest_batch.py --out benchmarks/results/pytest_batch.json

It writes a temporary test file with two parametrised tests over the same 100
``EvaluationRequest`` cases (10 documents x 10 claims, from backends.py's
lists; ``--order doc-major``, the default, puts each document's claims
together as a test author writes them, ``--order interleaved`` makes
neighbouring cases never share a document):

- ``test_batched(judge_batch, case)``: the plugin scores all 100 in one
  ``evaluate_many`` when the first of them sets up; each test reads its response;
- ``test_one_by_one(fact_check, case)``: one ``evaluate`` per test.

and runs it in one ``pytest`` subprocess with only the judgelab plugin. A
``test_0_load`` test loads the model first, so neither side pays for it. The
batched side runs first, so the prefix cache it leaves can only help the
one-by-one side. The time of a side is the sum of its tests' setup + call
durations as pytest reports them (``pytest_runtest_logreport``), so the
batched side includes its one ``evaluate_many``. Both sides' scores are
compared too (largest difference). ``--out`` gets the row through
``results_file.write_results``, with this script's command, the commit and
whether the tree was dirty, the CPU model and its instruction-set flags,
llama.cpp's system info, the core count, the Python and library versions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from backends import CLAIMS, DOCS  # noqa: E402
from results_file import machine, script_argv, write_results  # noqa: E402

EXTRA_CLAIMS = ["The document names a person.", "A time of day is given."]

CONFTEST = '''
import json, os

TIMES = {"batched": 0.0, "one_by_one": 0.0, "load": 0.0}
SCORES = {}

def pytest_runtest_logreport(report):
    if report.when not in ("setup", "call"):
        return
    name = report.nodeid.split("::")[-1]
    for side in ("batched", "one_by_one"):
        if name.startswith(f"test_{side}["):
            TIMES[side] += report.duration
    if name == "test_0_load":
        TIMES["load"] += report.duration
    for key, value in report.user_properties:
        if key == "judgelab_score":
            SCORES.setdefault(name, value)

def pytest_sessionfinish(session):
    with open(os.environ["PYTEST_BATCH_OUT"], "w") as f:
        json.dump({"times": TIMES, "scores": SCORES}, f)
'''

TESTS = '''
import pytest
from judgelab.evaluators import EvaluationRequest

DOCS = {docs!r}
CLAIMS = {claims!r}
PAIRS = [(d, c) for d in DOCS for c in CLAIMS] if {doc_major!r} else [(d, c) for c in CLAIMS for d in DOCS]
CASES = [EvaluationRequest(user_text=d, response_content=c) for d, c in PAIRS]
IDS = [f"{{i:03d}}" for i in range(len(CASES))]

def test_0_load(judge):
    assert judge.id

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_batched(judge_batch, case):
    assert 0.0 <= judge_batch(case).score <= 1.0

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_by_one(fact_check, case):
    assert 0.0 <= fact_check.evaluate(case).score <= 1.0
'''


def run(docs: int, claims: int, threads: int, order: str = "doc-major") -> dict:
    claim_list = (list(CLAIMS) + EXTRA_CLAIMS)[:claims]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "conftest.py").write_text(CONFTEST)
        (folder / "test_suite.py").write_text(textwrap.dedent(TESTS.format(docs=DOCS[:docs], claims=claim_list,
                                                                              doc_major=order == "doc-major")))
        out = folder / "times.json"
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_BATCH_OUT": str(out),
               "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH", "")) if p)}
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "judgelab.testing", "-p", "no:cacheprovider",
                               "--judgelab-threads", str(threads), "--junitxml", str(folder / "j.xml")],
                              cwd=folder, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"pytest failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
        data = json.loads(out.read_text())
        summary = [ln for ln in proc.stdout.splitlines() if " checks: " in ln or ln.startswith("judge ")]
    scores = data["scores"]
    n = docs * len(claim_list)
    diffs = [abs(float(scores[f"test_batched[{i:03d}]"]) - float(scores[f"test_one_by_one[{i:03d}]"])) for i in range(n)]
    t = data["times"]
    return {"checks": n, "docs": docs, "claims": len(claim_list), "threads": threads, "order": order,
            "batched_s": round(t["batched"], 3), "one_by_one_s": round(t["one_by_one"], 3),
            "speedup": round(t["one_by_one"] / t["batched"], 2) if t["batched"] else None,
            "load_s": round(t["load"], 3), "max_score_diff": max(diffs), "plugin_summary": summary}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=10, help="documents (default 10, at most 12)")
    ap.add_argument("--claims", type=int, default=10, help="claims per document (default 10, at most 10)")
    ap.add_argument("--threads", type=int, default=2, help="model threads (default 2)")
    ap.add_argument("--order", choices=("doc-major", "interleaved"), default="doc-major",
                    help="doc-major: each document's claims one after another (default); interleaved: "
                    "neighbouring cases never share a document")
    ap.add_argument("--out", type=Path, default=None, help="write the row as JSON here")
    args = ap.parse_args(argv)
    row = run(args.docs, args.claims, args.threads, args.order)
    print(f"{'order':>11} {'checks':>6} {'batched s':>10} {'one by one s':>13} {'speedup':>8} {'max |dP|':>10}")
    print(f"{row['order']:>11} {row['checks']:>6} {row['batched_s']:>10.2f} {row['one_by_one_s']:>13.2f} {row['speedup']:>8.2f} "
          f"{row['max_score_diff']:>10.2e}")
    print("\n".join(row["plugin_summary"]))
    print(f"cpu: {machine()['cpu']}")
    if args.out:
        write_results(args.out, row, argv=script_argv(__file__, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
