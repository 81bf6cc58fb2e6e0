"""Careless input to the real CLI: one line saying what, where and what to do, exit 2, no traceback.

Every case runs ``judgelab`` in a subprocess. Options are validated before
the model loads, so most of these take well under a second of work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
STARTER = TESTS.parent / "calibration" / "starter.jsonl"
LATIN1 = "caf\u00e9 cr\u00e8me".encode("latin-1")  # not valid UTF-8


def _fact_rows(n: int = 4) -> list[str]:
    lines = [ln for ln in STARTER.read_text(encoding="utf-8").splitlines() if '"fact-check"' in ln]
    return lines[:n]


@pytest.fixture
def latin1_set(tmp_path: Path) -> Path:
    path = tmp_path / "latin1.jsonl"
    row = json.loads(_fact_rows(1)[0])
    path.write_bytes(json.dumps(row).encode("utf-8") + b"\n" + b'{"id": "x", "response": "' + LATIN1 + b'"}\n')
    return path


def test_sets_validate_non_utf8(run_cli, user_error, latin1_set):
    user_error(run_cli("sets", "validate", str(latin1_set)), f"{latin1_set}:2", "not UTF-8", "Convert")


def test_calibrate_non_utf8_set(run_cli, user_error, latin1_set, tmp_path):
    user_error(run_cli("calibrate", "--set", str(latin1_set), "--out", str(tmp_path / "o")),
                      "not UTF-8", str(latin1_set))


def test_sets_import_non_utf8(run_cli, user_error, tmp_path):
    path = tmp_path / "wice.jsonl"
    path.write_bytes(b'{"claim": "' + LATIN1 + b'"}\n')
    user_error(run_cli("sets", "import", "wice", str(path), "--out", str(tmp_path / "o.jsonl")),
                      "not UTF-8", str(path))


def test_check_document_non_utf8(run_cli, user_error, tmp_path):
    path = tmp_path / "doc.txt"
    path.write_bytes(LATIN1)
    user_error(run_cli("check", "--document", f"@{path}"), "--document", str(path), "not UTF-8")


@pytest.mark.parametrize("value", ["2", "nan", "-0.1", "abc"])
def test_check_threshold_out_of_range(run_cli, user_error, value):
    user_error(run_cli("check", "--threshold", value), "--threshold", value)


def test_calibrate_unwritable_out(run_cli, user_error):
    user_error(run_cli("calibrate", "--out", "/proc/x", "--no-progress"), "/proc/x", "--out")


@pytest.mark.parametrize("value", ["-1", "0"])
def test_calibrate_limit_below_one(run_cli, user_error, value, tmp_path):
    user_error(run_cli("calibrate", "--limit", value, "--out", str(tmp_path)), "--limit", ">= 1")
    assert not (tmp_path / "scores.jsonl").exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [("--threshold-strategy", "bogus"), ("--resamples", "0"), ("--target-error", "5")],
)
def test_calibrate_bad_analysis_options_are_refused_before_scoring(run_cli, user_error, option, value, tmp_path):
    user_error(run_cli("calibrate", option, value, "--out", str(tmp_path)), option)
    assert not (tmp_path / "scores.jsonl").exists()


def test_calibrate_library_checks_options_before_scoring(tmp_path):
    from judgelab.calibration import CalibrationOptions, calibrate
    from judgelab.errors import ParameterError

    with pytest.raises(ParameterError, match="'n_resamples' parameter of calibrate"):
        calibrate("no-such-model", out=tmp_path, options=CalibrationOptions(n_resamples=0))
    with pytest.raises(ValueError, match="'target_error'"):  # ParameterError is a ValueError
        calibrate("no-such-model", out=tmp_path, options=CalibrationOptions(target_error=5))


def test_calibrate_and_stress_take_their_options_as_one_object(tmp_path):
    from judgelab.calibration import CalibrationOptions, analyze_run, calibrate, stress
    from judgelab.errors import ParameterError

    # an option as a keyword is an unknown keyword (Python's own error), never silently ignored
    with pytest.raises(TypeError, match="unexpected keyword argument 'limit'"):
        calibrate("no-such-model", out=tmp_path, limit=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'fence'"):
        stress("no-such-model", out=tmp_path, fence=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        analyze_run([], tmp_path, seed=1)
    # a dict of fields is refused by name, saying which class to build
    with pytest.raises(ParameterError, match="'options' parameter of calibrate must be None or a CalibrationOptions"):
        calibrate("no-such-model", out=tmp_path, options={"limit": 3})
    with pytest.raises(ParameterError, match="'options' parameter of stress must be None or a StressOptions"):
        stress("no-such-model", out=tmp_path, options=CalibrationOptions(limit=3))
    assert not (tmp_path / "scores.jsonl").exists()


def test_sets_validate_empty_file(run_cli, user_error, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    user_error(run_cli("sets", "validate", str(path)), str(path), "no valid rows")


def test_faithbench_with_wrong_columns(run_cli, user_error, tmp_path):
    path = tmp_path / "FaithBench.csv"
    path.write_text("doc,claim,label\nsome text,a claim,Consistent\n")
    user_error(run_cli("sets", "import", "faithbench", str(path), "--out", str(tmp_path / "o.jsonl")),
                      f"{path}:1", "source", "worst-label")
    assert not (tmp_path / "o.jsonl").exists()


def test_faithbench_with_no_rows(run_cli, user_error, tmp_path):
    path = tmp_path / "FaithBench.csv"
    path.write_text("source,summary,LLM,worst-label,best-label\n")
    user_error(run_cli("sets", "import", "faithbench", str(path), "--out", str(tmp_path / "o.jsonl")),
                      "No rows were imported", str(path))


def _spec_text(model_id: str) -> str:
    gemma = TESTS.parent / "models" / "gemma-3-270m.toml"
    text = gemma.read_text(encoding="utf-8")
    return text.replace('id = "gemma-3-270m"', f'id = "{model_id}"', 1)


def test_binary_spec_is_skipped_and_reported(run_cli, tmp_path):
    (tmp_path / "broken.toml").write_bytes(b"\x00\xff\xfe binary")
    (tmp_path / "other.toml").write_text(_spec_text("other-judge"), encoding="utf-8")
    proc = run_cli("models", env={"JUDGELAB_MODELS_PATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "broken.toml" in proc.stderr and "not UTF-8" in proc.stderr
    assert "other-judge" in proc.stdout and "gemma-3-270m" in proc.stdout


def test_one_invalid_spec_does_not_hide_the_others(run_cli, tmp_path):
    (tmp_path / "bad.toml").write_text('id = "bad"\nfamily = 3\nnonsense = [\n', encoding="utf-8")
    proc = run_cli("models", env={"JUDGELAB_MODELS_PATH": str(tmp_path)})
    assert proc.returncode == 0 and "gemma-3-270m" in proc.stdout, proc.stderr
    assert "bad.toml" in proc.stderr and "Traceback" not in proc.stderr


def test_duplicate_spec_ids_name_both_files(run_cli, user_error, tmp_path):
    impostor = tmp_path / "my-judge.toml"
    impostor.write_text(_spec_text("gemma-3-270m").replace("description =", 'description = "impostor" #', 1),
                        encoding="utf-8")
    env = {"JUDGELAB_MODELS_PATH": str(tmp_path)}
    err = user_error(run_cli("models", env=env), "gemma-3-270m", str(impostor), "gemma-3-270m.toml")
    assert "another id" in err
    user_error(run_cli("check", "--model", "gemma-3-270m", env=env), str(impostor), "gemma-3-270m.toml")


def test_single_class_set_is_stated_in_the_report(tmp_path, scripted_evaluator):
    from judgelab.calibration import CalibrationOptions, LabelledRow, calibrate

    rows = [LabelledRow(id=f"r{i}", task="fact-check", documents=["d"], response=f"c{i}", label=1) for i in range(12)]
    ev = scripted_evaluator({f"c{i}": 0.5 + i / 30 for i in range(12)})
    res = calibrate(set=rows, out=tmp_path, evaluators={"fact-check": ev},
                    options=CalibrationOptions(n_resamples=50, progress=False, figures=False))
    a = res.analyses["fact-check"]
    assert a.headline().startswith("No threshold to ship") and "label 0" in a.headline()
    assert any("Only label 1 rows" in w for w in a.warnings())
    md = (tmp_path / "report.md").read_text()
    assert "Only label 1 rows" in md and "Ship threshold" not in md
    assert json.loads((tmp_path / "metrics.json").read_text())["tasks"]["fact-check"]["warnings"]


def test_fact_check_rows_without_evidence_are_stated(tmp_path, scripted_evaluator):
    from judgelab.calibration import CalibrationOptions, LabelledRow, calibrate

    rows = [LabelledRow(id=f"r{i}", task="fact-check", documents=[] if i < 2 else ["d"], response=f"c{i}",
                        label=i % 2) for i in range(12)]
    ev = scripted_evaluator({f"c{i}": 0.3 + (i % 2) * 0.4 for i in range(12)})
    res = calibrate(set=rows, out=tmp_path, evaluators={"fact-check": ev},
                    options=CalibrationOptions(n_resamples=50, progress=False, figures=False))
    warnings = res.analyses["fact-check"].warnings()
    assert any("2 fact-check row(s) have no evidence" in w and "r0, r1" in w for w in warnings)
    assert "have no evidence" in (tmp_path / "report.md").read_text()


def test_calibrate_stress_with_ray_is_refused_not_run_locally(run_cli, user_error, tmp_path):
    out = tmp_path / "o"
    user_error(run_cli("calibrate", "--stress", "--ray", "local", "--out", str(out)),
                      "--stress does not run on Ray", "drop --ray")
    assert not (out / "scores.jsonl").exists()
