"""Under ``CI=true`` a test that would skip for a missing real part (Chromium, promptfoo, SmolLM2's weights) fails;
locally it skips with the line that names the part and its install (tests/conftest.py, issue 63)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MISSING_PART = "missing real part: "  # tests/conftest.py's MISSING_PART (tests import no conftest)

MODULE = f'''
import pytest

def test_needs_a_part():
    pytest.skip({MISSING_PART!r} + "no widget: apt-get install widget")

def test_skips_for_another_reason():
    pytest.skip("this backend evaluates prompts whole")
'''

WHOLE_MODULE = f'''
import pytest
pytest.skip({MISSING_PART!r} + "no widget", allow_module_level=True)

def test_never_collected():
    pass
'''


def _pytest(folder: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", "-p", "conftest",
                           "--rootdir", str(folder), str(folder)], capture_output=True, text=True, env=env, cwd=folder)


def test_a_missing_part_fails_under_ci_and_skips_locally(tmp_path):
    (tmp_path / "test_parts.py").write_text(MODULE, encoding="utf-8")
    strict = _pytest(tmp_path, "true")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "1 failed, 1 skipped" in strict.stdout and "no widget: apt-get install widget" in strict.stdout
    local = _pytest(tmp_path, None)
    assert local.returncode == 0 and "2 skipped" in local.stdout, local.stdout + local.stderr


def test_a_module_skipped_for_a_missing_part_fails_under_ci(tmp_path):
    (tmp_path / "test_whole.py").write_text(WHOLE_MODULE, encoding="utf-8")
    strict = _pytest(tmp_path, "true")
    assert strict.returncode != 0 and "no widget" in strict.stdout, strict.stdout + strict.stderr
    local = _pytest(tmp_path, "false")  # skipped, so no test ran: pytest's "no tests collected" code, not a failure
    assert local.returncode == 5 and "1 skipped" in local.stdout, local.stdout + local.stderr
