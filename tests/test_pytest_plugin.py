"""The pytest plugin (judgelab.testing), run as a real pytest in a subprocess over temporary test files.

Every run uses the real embedded judge (gemma-3-270m through llama.cpp). The
subprocess loads the plugin with ``-p judgelab.testing`` and no other plugin
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD``), so the run is the same whether or not
this checkout's entry point is installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DOC = "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."
CLAIM = "The Eiffel Tower was completed in 1889."

UNRELATED = '''
import sys

def test_unrelated():
    assert "llama_cpp" not in sys.modules, "the plugin imported llama_cpp for a test that uses no fixture"
'''

CHECKS = f'''
import pytest
from judgelab.evaluators import EvaluationRequest
from judgelab.testing import assert_fails, assert_passes

DOC = {DOC!r}
CLAIM = {CLAIM!r}

def test_passes(fact_check):
    assert_passes(fact_check.evaluate(EvaluationRequest(user_text=DOC, response_content=CLAIM)))

def test_fails_with_reasons(evaluator):
    strict = evaluator("fact-checking", threshold=0.99)
    assert_passes(strict.evaluate(EvaluationRequest(user_text=DOC, response_content=CLAIM)))

def test_plain_assert_explains(evaluator):
    response = evaluator("fact-checking", threshold=0.99).evaluate(EvaluationRequest(user_text=DOC, response_content=CLAIM))
    assert response.passed

def test_assert_fails(evaluator):
    assert_fails(evaluator("fact-checking", threshold=0.99).evaluate(EvaluationRequest(user_text=DOC, response_content=CLAIM)))

CASES = [EvaluationRequest(user_text=DOC, response_content=c)
         for c in ("It was finished in 1889.", "It stands in Paris.", "It is made of cheese.")]

@pytest.mark.parametrize("case", CASES)
def test_batched(judge_batch, fact_check, case):
    batched = judge_batch(case)
    alone = fact_check.evaluate(case)
    assert abs(batched.score - alone.score) < 1e-4, (batched, alone)

@pytest.mark.judgelab(evaluator="relevancy", threshold=0.3)
@pytest.mark.parametrize("case", [EvaluationRequest(user_text="When was the Eiffel Tower finished?",
                                                    data_list=[DOC], response_content=CLAIM)])
def test_batched_relevancy(judge_batch, case):
    response = judge_batch(case)
    assert response.metadata["evaluator"] == "relevancy" and response.metadata["threshold"] == 0.3
'''

ABSTAINS = f'''
from judgelab.evaluators import EvaluationRequest
from judgelab.testing import assert_passes

def test_abstains(fact_check):
    assert_passes(fact_check.evaluate(EvaluationRequest(user_text={DOC!r}, response_content={CLAIM!r})))
'''


def run_pytest(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """pytest in a fresh interpreter in ``folder``, with only the judgelab plugin loaded."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "judgelab.testing", "-p", "no:cacheprovider", "-rA", *args],
        cwd=folder, capture_output=True, text=True, env=env, timeout=timeout,
    )


def outcomes(proc: subprocess.CompletedProcess) -> dict[str, str]:
    """``{test id: PASSED/FAILED/SKIPPED}`` from the short summary (``-rA``)."""
    found = {}
    for line in proc.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "SKIPPED", "ERROR"):
            if word == "SKIPPED":  # "SKIPPED [1] file.py:4: reason"
                rest = rest.split("] ", 1)[-1].split(":", 1)[0]
            found[rest.split(" - ")[0].strip()] = word
    return found


def section(proc: subprocess.CompletedProcess, test: str) -> str:
    """The failure report of one test."""
    out = proc.stdout
    start = out.index(f"_ {test} _")
    end = min((i for i in (out.find("\n____", start + 1), out.find("\n====", start + 1)) if i != -1), default=len(out))
    return out[start:end]


@pytest.fixture(scope="module")
def checks_run(tmp_path_factory, judge_model) -> tuple[subprocess.CompletedProcess, Path]:
    folder = tmp_path_factory.mktemp("plugin_checks")
    (folder / "test_a_unrelated.py").write_text(UNRELATED)
    (folder / "test_b_checks.py").write_text(CHECKS)
    return run_pytest(folder, "--judgelab-model", judge_model.id, "--judgelab-threads", "1",
                      "--junitxml", "junit.xml"), folder


def test_a_check_passes_and_an_unrelated_file_loads_no_model(checks_run):
    proc, _ = checks_run
    found = outcomes(proc)
    assert found.get("test_a_unrelated.py::test_unrelated") == "PASSED", proc.stdout
    assert found.get("test_b_checks.py::test_passes") == "PASSED", proc.stdout
    assert found.get("test_b_checks.py::test_assert_fails") == "PASSED", proc.stdout
    assert [found.get(f"test_b_checks.py::test_batched[case{i}]") for i in range(3)] == ["PASSED"] * 3, proc.stdout
    assert found.get("test_b_checks.py::test_batched_relevancy[case0]") == "PASSED", proc.stdout


def test_a_failure_shows_score_threshold_feedback_chunks_model(checks_run, judge_model):
    proc, _ = checks_run
    assert outcomes(proc).get("test_b_checks.py::test_fails_with_reasons") == "FAILED", proc.stdout
    report = section(proc, "test_fails_with_reasons")
    assert "the judge did not pass it (FAIL)" in report
    assert "score:" in report and "threshold 0.9900" in report
    assert "feedback:  Not supported: P(yes) = " in report and "< threshold 0.99" in report
    assert "chunks:" in report
    assert f"model:     {judge_model.id}  spec {judge_model.spec.spec_hash}" in report


def test_a_plain_assert_shows_the_response(checks_run):
    proc, _ = checks_run
    assert outcomes(proc).get("test_b_checks.py::test_plain_assert_explains") == "FAILED", proc.stdout
    report = section(proc, "test_plain_assert_explains")
    assert "EvaluationResponse(passed=False, score=" in report
    assert "threshold=0.99, feedback='Not supported: P(yes) = " in report


def test_the_terminal_summary_counts_checks(checks_run, judge_model):
    proc, _ = checks_run
    summary = proc.stdout[proc.stdout.index("- judgelab -"):]
    # 1 passing check, 3 strict ones that fail, 3 batched and the same 3 alone (whose verdicts agree),
    # 1 batched relevancy check
    counts = re.search(r"(\d+) checks: (\d+) passed, (\d+) failed, (\d+) abstained; judgment [0-9.]+ s", summary)
    assert counts, summary
    total, passed, failed, abstained = map(int, counts.groups())
    assert (total, abstained) == (11, 0) and passed + failed == 11 and passed >= 1 and failed >= 3, summary
    assert "(4 of them in 2 judge_batch call(s))" in summary, summary
    assert f"judge {judge_model.id} (spec {judge_model.spec.spec_hash}, llama_cpp)" in summary, summary


def test_junit_xml_carries_score_threshold_decision(checks_run, judge_model):
    _, folder = checks_run
    cases = {c.get("name"): c for c in ET.parse(folder / "junit.xml").iter("testcase")}
    props = {name: [(p.get("name"), p.get("value")) for p in case.iter("property")] for name, case in cases.items()}
    failed = dict(props["test_fails_with_reasons"])
    assert failed["judgelab_decision"] == "fail" and failed["judgelab_threshold"] == "0.99"
    assert 0.0 < float(failed["judgelab_score"]) < 0.99
    assert failed["judgelab_evaluator"] == "fact-checking" and failed["judgelab_model"] == judge_model.id
    assert dict(props["test_passes"])["judgelab_decision"] == "pass"
    assert props["test_unrelated"] == []


@pytest.fixture(scope="module")
def policy_folder(tmp_path_factory, judge_model) -> Path:
    """A folder whose pytest.ini names a policy with a band [0.001, 0.999] around every score of the judge."""
    from judgelab.calibration import Policy
    from judgelab.evaluators import FactCheckingEvaluator

    folder = tmp_path_factory.mktemp("plugin_policy")
    policy = Policy(task="fact-check", lower=0.001, upper=0.999, alpha=0.1, delta=0.1, feasible=True, n=200,
                    n_units=200, unit_size=1, spec_hash=judge_model.spec.spec_hash,
                    template_hash=FactCheckingEvaluator(judge_model).template_hash, model=judge_model.id)
    policy.save(folder / "policy.json")
    (folder / "pytest.ini").write_text(f"[pytest]\njudgelab_model = {judge_model.id}\njudgelab_policy = policy.json\n"
                                       "judgelab_threads = 1\n")
    (folder / "test_policy.py").write_text(ABSTAINS)
    return folder


def test_an_abstention_is_skipped_with_its_band(policy_folder):
    proc = run_pytest(policy_folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outcomes(proc).get("test_policy.py") == "SKIPPED", proc.stdout
    assert "judge abstained: P=0." in proc.stdout and "inside the band [0.0010, 0.9990]" in proc.stdout
    assert "1 checks: 0 passed, 0 failed, 1 abstained" in proc.stdout, proc.stdout


def test_abstain_fail_fails_the_test(policy_folder):
    proc = run_pytest(policy_folder, "--judgelab-abstain=fail")
    assert outcomes(proc).get("test_policy.py::test_abstains") == "FAILED", proc.stdout
    report = section(proc, "test_abstains")
    assert "inside the band [0.0010, 0.9990] (--judgelab-abstain=fail)" in report
    assert "policy ABSTAIN: band [0.0010, 0.9990]" in report


def test_a_bad_option_is_one_usage_error(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    proc = run_pytest(tmp_path, "--judgelab-threshold", "2")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "--judgelab-threshold must be a number in [0, 1], got '2'." in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_entry_point_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {"judgelab": "judgelab.testing"}
    assert any(dep.startswith("mcp") for dep in project["optional-dependencies"]["mcp"])
