"""The report's Deployment section and the policy/estimate commands, from saved scores (no model)."""

from __future__ import annotations

import json

import numpy as np

from judgelab.calibration import CalibrationOptions, ScoreRecord, analyze_run, load_policy
from judgelab.cli import main


def _records(n=1200, seed=0, prefix="r"):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        y = int(rng.random() < 0.5)
        s = float(rng.beta(3, 1.5) if y else rng.beta(1.5, 3))
        out.append(ScoreRecord(id=f"{prefix}{i}", task="fact-check", label=y, score=s, spec_hash="spec",
                               template_hash="tmpl", model="gemma-3-270m", evaluator="FactCheckingEvaluator"))
    return out


def _save(records, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in records), encoding="utf-8")
    return path


def test_analyze_run_writes_policy_and_deployment_section(tmp_path):
    records = _records()
    analyze_run(records, tmp_path, meta={"set": "synthetic"}, options=CalibrationOptions(n_resamples=200))
    policy = load_policy(tmp_path / "policy.json")
    assert policy.feasible and policy.set == "synthetic" and policy.template_hash == "tmpl"
    assert policy.heldout is not None and policy.heldout.n == len(records)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    section = md[md.index("### Deployment (fact-check)"):]
    assert f"{policy.lower:.4f} / {policy.upper:.4f}" in section
    assert "Learn then Test" in section and "risk-coverage.png" in section
    assert f"judgelab gate {tmp_path}" in section and f"judgelab estimate --run {tmp_path}" in section
    assert (tmp_path / "figures" / "fact-check-risk-coverage.png").stat().st_size > 1000
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Deployment (fact-check)" in html and "Risk against coverage" in html
    metrics = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["tasks"]["fact-check"]["policy"]["upper"] == policy.upper


def test_policy_and_estimate_commands(tmp_path, capsys):
    run = _save(_records(), tmp_path / "run" / "scores.jsonl")
    assert main(["policy", str(run.parent), "--alpha", "0.1", "--delta", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "PASS at or above" in out and "held-out" in out
    assert load_policy(tmp_path / "run" / "policy.json").feasible
    labelled = _save(_records(300, seed=1, prefix="l"), tmp_path / "lab" / "scores.jsonl")
    traffic = _save(_records(2000, seed=2, prefix="t"), tmp_path / "traffic" / "scores.jsonl")
    assert main(["estimate", "--run", str(run.parent), "--labelled", str(labelled), "--unlabelled", str(traffic),
                 "--json"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert est["n_labelled"] == 300 and est["n_unlabelled"] == 2000
    assert est["corrected"]["low"] <= 0.5 <= est["corrected"]["high"]


def test_estimate_scores_unlabelled_traffic_with_the_runs_model(tmp_path, capsys):
    run = _save(_records(200), tmp_path / "run" / "scores.jsonl")
    labelled = _save(_records(100, seed=1, prefix="l"), tmp_path / "lab" / "scores.jsonl")
    traffic = tmp_path / "traffic.jsonl"
    claims = ["The tower is in Paris.", "The tower is in Rome.", "It was completed in 1889.", "It is made of wood."]
    traffic.write_text("".join(json.dumps({"task": "fact-check", "documents": ["The Eiffel Tower is in Paris. "
                                                                             "It was completed in 1889."],
                                           "response": c}) + "\n" for c in claims), encoding="utf-8")
    assert main(["estimate", "--run", str(run.parent), "--labelled", str(labelled), "--unlabelled", str(traffic),
                 "--out", str(tmp_path / "est"), "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "4 traffic rows, 100 labelled" in out and "naive pass rate" in out
    scored = (tmp_path / "est" / "unlabelled" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(scored) == 4 and all(json.loads(line)["model"] == "gemma-3-270m" for line in scored)
