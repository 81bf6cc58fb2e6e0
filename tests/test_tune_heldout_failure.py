"""A held-out row that cannot be scored during tuning is a partial run (exit 3), as in calibrate: no training here."""

from __future__ import annotations

import pytest

import judgelab.tuning
from judgelab.calibration import LabelledRow
from judgelab.cli import main
from judgelab.errors import PARTIAL_RUN_EXIT, JudgelabError, PartialRunError


class _StoppedJudge:
    """A judge model that stopped answering: what it reads from the server fails, as a remote judge that went away
    does; its spec is known without the server (a remote spec is the file the user wrote)."""

    spec = None

    def __getattr__(self, name: str):
        raise JudgelabError(f"the judge stopped answering ({name})")


def _rows() -> dict[str, list[LabelledRow]]:
    rows = [LabelledRow(id=f"r{i}", task="fact-check", documents=[f"The sky is blue {i}."], response="The sky is blue.",
                        label=i % 2) for i in range(4)]
    return {"wice": rows}


def test_a_failed_held_out_row_is_a_partial_run_error_naming_the_source():
    with pytest.raises(PartialRunError) as err:
        judgelab.tuning.evaluate_heldout(_StoppedJudge(), _rows(), evaluator=None, label="base")
    assert "'wice'" in str(err.value) and "stopped answering" in err.value.first_error
    assert err.value.n_failed == err.value.n_rows == 4


def test_tune_exits_3_when_held_out_scoring_fails(monkeypatch, capsys, tmp_path):
    def tune_that_evaluates(config):  # the held-out evaluation tune runs before its first step
        return judgelab.tuning.evaluate_heldout(_StoppedJudge(), _rows(), evaluator=None, label="base")

    monkeypatch.setattr(judgelab.tuning, "tune", tune_that_evaluates)
    assert main(["tune", "--set", "x.jsonl", "--out", str(tmp_path / "t")]) == PARTIAL_RUN_EXIT
    assert "partial run" in capsys.readouterr().err
