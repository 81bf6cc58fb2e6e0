"""``--ray`` (auto) with no cluster running: one judgelab line naming ``--ray local`` and ``ray start --head``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

SRC = Path(__file__).resolve().parent.parent / "src"


def test_auto_with_no_cluster_is_one_line_with_both_ways_out(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(tmp_path / "ray")  # where 'ray start' would have left its address: nothing there
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    code = "import sys; from judgelab.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["calibrate", "--ray", "--out", str(tmp_path / "out"), "--limit", "2", "--no-progress", "--no-plots"]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("judgelab calibrate: error: "), err
    assert "--ray local" in err and "ray start --head" in err, err
    assert "Could not find any running Ray instance" not in err  # Ray's own message, with its --address flag
