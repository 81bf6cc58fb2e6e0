"""No silent wrong numbers (issue 40), without a model: intervals that cannot vary are flagged by every command
that prints one, ``--limit`` takes units spread over the set, a run whose rows failed publishes nothing.

Runs here are saved scores (``analyze_run`` writes their metrics.json and report), so every command reads them
as it reads a calibrate folder. The served-judge side (a server killed mid-run) is in
test_partial_remote_runs.py.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from judgelab.calibration import (
    MIN_INTERVAL_UNITS,
    SPREAD_UNITS,
    CalibrationOptions,
    LabelledRow,
    ScoreRecord,
    analyze_run,
    check_publishable,
    interval_warning,
    resolve_set,
    run_completeness,
)
from judgelab.calibration.data import rows_by_task
from judgelab.cli import main as cli_main
from judgelab.errors import PARTIAL_RUN_EXIT, PartialRunError


def _records(n: int, units: int, *, seed: int = 0, errors: int = 0) -> list[ScoreRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        label = i % 2
        score = min(1.0, max(0.0, 0.35 + 0.3 * label + rng.uniform(-0.3, 0.3)))
        failed = i >= n - errors
        out.append(ScoreRecord(id=f"r{i:02d}", task="fact-check", label=label, unit=f"unit-{i % units}",
                               score=None if failed else score, raw_score=None if failed else score,
                               passed=None if failed else score >= 0.5, model="scripted", prompt_tokens=10,
                               error="RemoteError: Cannot reach the judge server" if failed else None))
    return out


def _run(folder: Path, records: list[ScoreRecord]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scores.jsonl").write_text("".join(r.model_dump_json(exclude_none=True, by_alias=True) + "\n"
                                                 for r in records), encoding="utf-8")
    analyze_run(records, folder, meta={"model": "scripted", "set": "one-unit"},
                options=CalibrationOptions(n_resamples=100, figures=False, progress=False))
    return folder


@pytest.fixture()
def one_unit(tmp_path) -> Path:
    """A calibrate-like run of 16 rows that are all one unit (the first rows of SummEdits are)."""
    return _run(tmp_path / "one-unit", _records(16, 1))


@pytest.fixture()
def few_units(tmp_path) -> Path:
    """A run of 24 rows from 8 units: fewer than MIN_INTERVAL_UNITS (a cascade needs more than one unit)."""
    return _run(tmp_path / "few-units", _records(24, 8))


def test_the_unit_floor_is_one_number():
    assert SPREAD_UNITS == MIN_INTERVAL_UNITS == 10


def test_interval_warning_names_the_units_or_a_zero_width_interval():
    one = interval_warning(["summary-7"] * 12, what="flip-rate intervals")
    assert one is not None and "1 unit(s) (summary-7)" in one and f"fewer than {MIN_INTERVAL_UNITS}" in one
    assert interval_warning([f"u{i}" for i in range(12)]) is None

    class Flat:
        low = high = 0.9

    flat = interval_warning([f"u{i}" for i in range(12)], {"accuracy": Flat()})
    assert flat is not None and "accuracy" in flat and "zero width over 12 units" in flat


def test_a_one_unit_run_warns_in_report_md_html_and_metrics_json(one_unit):
    doc = json.loads((one_unit / "metrics.json").read_text())
    warnings = doc["tasks"]["fact-check"]["warnings"]
    assert any("1 unit(s) (unit-0)" in w for w in warnings)
    for report in ("report.md", "report.html"):
        assert "1 unit(s) (unit-0)" in (one_unit / report).read_text(encoding="utf-8"), report


@pytest.mark.parametrize("command", [
    ["compare", "{run}", "{run}"],
    ["policy", "{run}", "--out", "{tmp}/policy.json"],
    ["gate", "{run}", "--set", "{run}"],
    ["jury", "{run}", "{run}", "--resamples", "100", "--out", "{tmp}/jury"],
    ["cascade", "fit", "{run}", "{run}", "--resamples", "100", "--no-plots", "--out", "{tmp}/cascade"],
])
def test_every_command_that_prints_an_interval_warns_on_few_units(command, few_units, tmp_path, capsys):
    args = [a.format(run=few_units, tmp=tmp_path) for a in command]
    code = cli_main(args)
    out = capsys.readouterr().out
    assert code in (0, 1), out  # gate may fail its checks; either way it prints its intervals
    assert "warning:" in out and "8 unit(s) (unit-0, unit-1, unit-2, ...)" in out, out


def test_gate_json_carries_the_warning(one_unit, capsys):
    cli_main(["gate", str(one_unit), "--set", str(one_unit), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert any("1 unit(s)" in w for w in doc["warnings"])


def test_limit_takes_whole_units_spread_over_the_set_with_both_labels(shared_data):
    rows, _, _ = resolve_set(f"summedits:{shared_data / 'summedits'}")
    first = rows_by_task(rows)["fact-check"][:12]
    assert len({r.unit for r in first}) == 1  # the first 12 rows: the edits of one summary
    picked = rows_by_task(rows, limit=12, seed=0)["fact-check"]
    assert len(picked) == 12 and len({r.unit for r in picked}) >= MIN_INTERVAL_UNITS
    assert {r.label for r in picked} == {0, 1}
    assert interval_warning([r.unit for r in picked]) is None
    # seeded: the same rows every time, others with another seed; in set order
    assert [r.id for r in rows_by_task(rows, limit=12, seed=0)["fact-check"]] == [r.id for r in picked]
    assert [r.id for r in rows_by_task(rows, limit=12, seed=1)["fact-check"]] != [r.id for r in picked]
    order = {r.id: i for i, r in enumerate(rows)}
    assert [order[r.id] for r in picked] == sorted(order[r.id] for r in picked)


def test_limit_keeps_small_units_whole():
    rows = [LabelledRow(id=f"q{i}-{j}", task="fact-check", label=j, response="r", meta={"pair": f"q{i}"})
            for i in range(40) for j in (0, 1)]
    picked = rows_by_task(rows, limit=40, seed=3)["fact-check"]
    by_unit: dict[str, int] = {}
    for r in picked:
        by_unit[r.unit] = by_unit.get(r.unit, 0) + 1
    assert len(picked) == 40 and set(by_unit.values()) == {2}  # 20 whole pairs
    assert len(rows_by_task(rows, limit=500)["fact-check"]) == 80


def test_a_run_with_failed_rows_may_not_publish_unless_allowed():
    done = run_completeness(_records(12, 12, errors=3), n_rows=14)
    assert (done.n_rows, done.n_scored, done.n_failed, done.n_unscored) == (14, 9, 5, 2)
    assert done.scope == "on 9 of 14 rows"
    with pytest.raises(PartialRunError) as err:
        check_publishable(done, allow_partial=False, command="calibrate")
    message = str(err.value)
    assert "5 of 14 rows failed" in message and "Cannot reach the judge server" in message
    assert "same calibrate command again to resume" in message and "--allow-partial" in message
    assert "\n" not in message and err.value.n_failed == 5
    check_publishable(done, allow_partial=True)
    check_publishable(run_completeness(_records(12, 12)), allow_partial=False)


def test_cascade_fit_of_a_partial_run_exits_3_and_writes_nothing(tmp_path, capsys):
    partial = _run(tmp_path / "partial", _records(16, 16, errors=2))
    out = tmp_path / "cascade"
    code = cli_main(["cascade", "fit", str(partial), str(partial), "--no-plots", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == PARTIAL_RUN_EXIT == 3 and len(err.splitlines()) == 1, err
    assert "2 of 16 rows failed" in err and not (out / "cascade.json").exists()
    code = cli_main(["cascade", "fit", str(partial), str(partial), "--no-plots", "--resamples", "100",
                     "--out", str(out), "--allow-partial"])
    assert code == 0 and (out / "cascade.json").exists()


def test_a_partial_analysis_says_on_n_of_m_rows(tmp_path):
    analyses = analyze_run(_records(16, 16, errors=4), tmp_path, options=CalibrationOptions(n_resamples=100, figures=False))
    headline = analyses["fact-check"].headline()
    assert headline.startswith("Partial run, on 12 of 16 rows: ")
    assert json.loads((tmp_path / "metrics.json").read_text())["tasks"]["fact-check"]["headline"] == headline


def test_version_flag(capsys):
    import re

    with pytest.raises(SystemExit) as done:
        cli_main(["--version"])
    assert done.value.code == 0 and re.fullmatch(r"judgelab \d+\.\d+\.\d+\S*", capsys.readouterr().out.strip())


def test_a_mistyped_remote_scheme_gets_the_scheme_list():
    from judgelab.errors import SpecError
    from judgelab.specs import load_spec

    with pytest.raises(SpecError, match="Unknown remote scheme 'openia'.*openai"):
        load_spec("openia:http://127.0.0.1:8080/v1#judge")


def test_short_forms_read_as_the_named_spec_or_the_default_chunks():
    from judgelab.specs import REMOTE_CHUNK_TOKENS, load_spec

    known, local = load_spec("openai:http://h/v1#gemma-3-270m-judge"), load_spec("gemma-3-270m-judge")
    assert (known.chunk_tokens, known.context_length, known.family) == (local.chunk_tokens, local.context_length,
                                                                         local.family)
    assert load_spec("ollama:http://h:11434#gemma-3-270m:latest").chunk_tokens == load_spec("gemma-3-270m").chunk_tokens
    assert load_spec("openai:http://h/v1#someone-elses").chunk_tokens == REMOTE_CHUNK_TOKENS


def test_attack_names_are_ascii(tmp_path):
    from judgelab.calibration import read_attacks_file
    from judgelab.errors import DataError

    path = tmp_path / "attacks.jsonl"
    path.write_text(json.dumps({"name": "atáque", "family": "injection", "where": "end", "text": "x"}) + "\n",
                    encoding="utf-8")
    with pytest.raises(DataError, match="ASCII letters"):
        read_attacks_file(path)
