"""Run files written by an older judgelab still load: scores.jsonl, metrics.json and policy.json.

``tests/data/runs-c47826c`` is the calibration part of ``judgelab stress --task fact-check --limit 12``
on the starter set, written by main at commit c47826c (before calibration/ became sub-packages and
the run files typed models). ``tests/data/runs-0e34c20/metrics.json`` is ``judgelab calibrate
--limit 24 --threads 1 --no-plots`` on the starter set, written by main at commit 0e34c20 (metrics.json
version 1, the last without a ``version`` key, with agreement, length bias and the calibrator choice).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from judgelab.calibration import METRICS_VERSION, MetricsFile, RunMeta, TaskMetrics, analyze, load_policy, read_metrics, read_scores, write_metrics
from judgelab.calibration.data import IntervalRecord
from judgelab.cli import main
from judgelab.errors import DataError

OLD_RUN = Path(__file__).resolve().parent / "data" / "runs-c47826c"
VERSION_1 = Path(__file__).resolve().parent / "data" / "runs-0e34c20" / "metrics.json"


def test_an_old_run_loads_as_typed_files():
    records = read_scores(OLD_RUN / "scores.jsonl")
    assert len(records) == 12 and {r.task for r in records} == {"fact-check"}
    assert all(r.ok and r.row_hash and r.unit for r in records)
    metrics = read_metrics(OLD_RUN / "metrics.json")
    assert metrics.version == METRICS_VERSION == 2  # read as version 1, migrated
    assert metrics.meta.model == "gemma-3-270m" and metrics.meta.rows == 12
    assert metrics.threshold("fact-check") == pytest.approx(0.7878427429411069)
    assert metrics.tasks["fact-check"].threshold.strategy == "balanced_accuracy"
    policy = load_policy(OLD_RUN / "policy.json")
    assert policy.task == "fact-check" and policy.version == 1
    assert metrics.tasks["fact-check"].policy == policy.model_copy(update={"created": ""})


def test_rewriting_an_old_metrics_file_only_adds_the_version(tmp_path):
    original = json.loads((OLD_RUN / "metrics.json").read_text(encoding="utf-8"))
    assert "version" not in original
    write_metrics(read_metrics(OLD_RUN / "metrics.json"), tmp_path / "metrics.json")
    text = (tmp_path / "metrics.json").read_text(encoding="utf-8")
    assert text.startswith('{\n  "version": 2,\n')
    assert json.loads(text) == {"version": 2, **original}


def test_a_task_the_file_lacks_is_an_error_not_a_default():
    metrics = read_metrics(OLD_RUN / "metrics.json")
    with pytest.raises(DataError, match=r"no task 'relevancy' \(it has \['fact-check'\]\)"):
        metrics.threshold("relevancy")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: d.update(version=METRICS_VERSION + 1), "version 3; this judgelab reads up to version 2"),
        (lambda d: d.update(version="3"), "version 3; this judgelab reads up to version 2"),
        (lambda d: d.update(version="two"), "field 'version'"),
        (lambda d: d["tasks"]["fact-check"].update(thresold={}), "tasks.fact-check.thresold"),
        (lambda d: d["tasks"]["fact-check"]["heldout"]["auroc"].update(estimate="high"),
         "tasks.fact-check.heldout.auroc.estimate"),
        (lambda d: d["tasks"]["fact-check"]["threshold"].pop("value"), "tasks.fact-check.threshold.value"),
        (lambda d: d.pop("meta"), "field 'meta'"),
    ],
)
def test_a_newer_or_broken_metrics_file_is_refused_naming_why(tmp_path, edit, match):
    doc = json.loads((OLD_RUN / "metrics.json").read_text(encoding="utf-8"))
    edit(doc)
    (tmp_path / "metrics.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError, match=match):
        read_metrics(tmp_path / "metrics.json")


def test_the_cli_reads_the_old_runs_threshold(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(OLD_RUN, run)
    assert main(["policy", str(run), "--out", str(tmp_path / "p.json")]) == 0
    assert "fact-check:" in capsys.readouterr().out
    assert main(["gate", str(run), "--set", str(run)]) == 0
    out = capsys.readouterr().out
    assert "judgelab gate: ok (fact-check)" in out


def test_a_broken_metrics_file_stops_the_cli_instead_of_thresholding_at_half(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(OLD_RUN, run)
    doc = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    del doc["tasks"]["fact-check"]["threshold"]
    (run / "metrics.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["gate", str(run), "--set", str(run)]) == 2
    assert "threshold" in capsys.readouterr().err


def test_a_bare_scores_file_says_it_thresholds_at_half(tmp_path, capsys):
    shutil.copy(OLD_RUN / "scores.jsonl", tmp_path / "scores.jsonl")
    assert main(["gate", str(tmp_path / "scores.jsonl"), "--set", str(tmp_path / "scores.jsonl")]) == 0
    assert "no metrics.json beside" in capsys.readouterr().err


def test_metrics_file_is_frozen():
    metrics = read_metrics(OLD_RUN / "metrics.json")
    assert isinstance(metrics, MetricsFile)
    with pytest.raises(ValidationError):
        metrics.meta.model = "other"  # type: ignore[misc]
    assert not math.isnan(metrics.threshold("fact-check"))


def test_consistency_probes_keep_the_identity_old_runs_recorded():
    # evaluator_hash values main wrote at c47826c into stress/consistency.jsonl (probes over a fact-checker);
    # a probe's identity must not change when its module moves, or an old stress run could not resume
    from judgelab.calibration.robustness import ChoiceProbe, NoulProbe
    from judgelab.evaluators import FactCheckingEvaluator, evaluator_identity

    ev = FactCheckingEvaluator(None)
    got = {
        "noul-q": NoulProbe(ev), "noul-not-q": NoulProbe(ev, negated=True), "choice-012": ChoiceProbe(ev, (0, 1, 2)),
        "choice-120": ChoiceProbe(ev, (1, 2, 0)), "choice-201": ChoiceProbe(ev, (2, 0, 1)),
    }
    assert {k: evaluator_identity(p).evaluator_hash for k, p in got.items()} == {
        "noul-q": "22e89b651ed1252f", "noul-not-q": "f7efe7d5e9ceab3d", "choice-012": "04f3f93010ab4b19",
        "choice-120": "292a532c1da70d4d", "choice-201": "d79280a677ab0664",
    }


def test_a_version_1_file_of_today_loads_with_the_same_values():
    raw = json.loads(VERSION_1.read_text(encoding="utf-8"))
    assert "version" not in raw
    metrics = read_metrics(VERSION_1)
    assert metrics.version == METRICS_VERSION
    assert metrics.model_dump(mode="python", exclude_unset=True, exclude={"version"}) == raw
    fc, raw_fc = metrics.tasks["fact-check"], raw["tasks"]["fact-check"]
    assert isinstance(fc, TaskMetrics) and fc.headline == raw_fc["headline"]
    assert fc.threshold.value == raw_fc["threshold"]["value"] and fc.threshold.mode == raw_fc["threshold"]["mode"]
    assert fc.heldout["auroc"] == IntervalRecord(**raw_fc["heldout"]["auroc"])
    assert fc.agreement.cohen_kappa.estimate == raw_fc["agreement"]["cohen_kappa"]["estimate"]
    assert fc.calibrator_choice.shipped == raw_fc["calibrator_choice"]["shipped"]
    assert fc.calibration["platt"].ece_after == raw_fc["calibration"]["platt"]["ece_after"]
    assert fc.abstain_band.heldout.coverage == raw_fc["abstain_band"]["heldout"]["coverage"]
    assert fc.policy.model_dump(exclude={"created"}) == raw_fc["policy"] and metrics.meta.seed == raw["meta"]["seed"]
    # a figure that was undefined (JSON null) reads as None, not as a number
    nulls = [k for k, v in raw_fc["in_sample_at_threshold"].items() if v is None]
    assert all(fc.in_sample_at_threshold[k] is None for k in nulls)


def test_an_analysis_is_written_as_its_typed_metrics_with_nan_as_null(tmp_path):
    records = read_scores(OLD_RUN / "scores.jsonl")
    a = analyze(records, n_resamples=50, calibrator="platt")
    m = a.metrics  # analyze gives the figures as metrics.json keeps them
    assert isinstance(m, TaskMetrics) and m.rows.scored == 12
    assert m.heldout["precision"].estimate is None  # no held-out row passes: precision is undefined (nan, as null)
    # platt makes the held-out ECE worse here, so raw scores are shipped and no calibrator is written
    assert (m.calibrator_choice.shipped, m.calibrator_choice.requested, m.calibrator) == ("raw", "platt", None)
    assert m.calibrator_choice.replaced_by_raw and "held-out ECE worse" in m.calibrator_choice.reason
    assert a.calibrator is None
    path = write_metrics(MetricsFile(meta=RunMeta(model="gemma-3-270m", rows=12), tasks={"fact-check": m}),
                         tmp_path / "metrics.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["version"] == METRICS_VERSION
    assert doc["tasks"]["fact-check"]["heldout"]["precision"] == {"estimate": None, "low": None, "high": None}
    # warnings are written only when there are some: here that the held-out intervals come from too few units
    assert doc["tasks"]["fact-check"].get("warnings", []) == m.warnings
    assert any("unit(s)" in w for w in m.warnings)
    assert read_metrics(path).tasks["fact-check"] == m


def test_run_facts_of_the_wrong_type_are_refused_when_writing(tmp_path):
    with pytest.raises(DataError, match=r"field 'meta.rows' of metrics.json"):
        write_metrics({"meta": {"rows": "many"}, "tasks": {}}, tmp_path / "metrics.json")
    assert not (tmp_path / "metrics.json").exists()


def test_compare_and_jury_read_the_threshold_of_a_version_2_run(tmp_path, capsys):
    runs = []
    for name in ("a", "b"):
        run = tmp_path / name
        shutil.copytree(OLD_RUN, run)
        write_metrics(read_metrics(run / "metrics.json"), run / "metrics.json")  # rewritten as version 2
        assert json.loads((run / "metrics.json").read_text(encoding="utf-8"))["version"] == 2
        runs.append(str(run))
    assert main(["compare", *runs, "--json", "--resamples", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["threshold_a"] == out["threshold_b"] == pytest.approx(0.7878427429411069)
    assert main(["jury", *runs, "--combine", "vote", "--resamples", "50", "--out", str(tmp_path / "jury")]) == 0
    assert "no metrics.json beside" not in capsys.readouterr().err


def _open_objects(node: object, path: str = "") -> list[str]:
    """Paths of a JSON schema that accept any key or any value (untyped); a ``default`` is a value, not a type."""
    if isinstance(node, dict):
        found = [path] if node == {} or node.get("additionalProperties") is True else []
        return found + [p for k, v in node.items() if k != "default" for p in _open_objects(v, f"{path}/{k}")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _open_objects(v, f"{path}[{i}]")]
    return []


def test_every_field_of_metrics_json_is_typed_but_the_run_facts_callers_add():
    # RunMeta keeps facts a caller of write_report adds; the policy is the typed Policy of policy.json
    assert _open_objects(MetricsFile.model_json_schema()) == ["/$defs/RunMeta"]


def test_records_with_the_old_lowercase_label_keys_load_and_analyse_alike():
    """Before the label words kept their case along the path, records keyed them ``yes``/``no``.

    Such a file loads as written (the keys are not rewritten or refused), and the analysis gives the
    same figures as on the same records keyed as judgelab writes them now (``Yes``/``No``).
    """
    old = read_scores(OLD_RUN / "scores.jsonl")
    assert all(r.probabilities is not None and set(r.probabilities) == {"yes", "no"} for r in old)
    assert all(r.probabilities["yes"] == pytest.approx(r.raw_score) for r in old)
    now = [r.model_copy(update={"probabilities": {k.capitalize(): p for k, p in r.probabilities.items()}})
           for r in old]
    a, b = analyze(old, n_resamples=50, seed=0), analyze(now, n_resamples=50, seed=0)
    a, b = a.metrics, b.metrics
    assert a.threshold.value == pytest.approx(read_metrics(OLD_RUN / "metrics.json").threshold("fact-check"))
    assert (a.threshold, a.headline) == (b.threshold, b.headline)
    assert a.heldout == b.heldout
