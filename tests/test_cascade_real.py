"""A cascade and a jury of the two real embedded judges (gemma-3-270m, then smollm2-135m), end to end.

Small on purpose: 12 starter rows scored by each judge, a cascade fitted on
them (far too few rows to certify anything: the fit says how many it would
need), then applied through the evaluator registry and a real server.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from judgelab.calibration import CascadeFitOptions, fit_cascade, load_rows, run
from judgelab.errors import PolicyMismatchError
from judgelab.evaluators import Cascade, EvaluationRequest, FactCheckingEvaluator, build_evaluator

STARTER = Path(__file__).resolve().parents[1] / "calibration" / "starter.jsonl"


@pytest.fixture(scope="module")
def rows():
    return [r for r in load_rows(STARTER) if r.task == "fact-check"][:12]


@pytest.fixture(scope="module")
def fitted(rows, judge_model, smollm_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("cascade")
    records = [run(FactCheckingEvaluator(m), rows, out=out / f"{m.id}.jsonl", progress=False)
               for m in (smollm_model, judge_model)]
    return fit_cascade(records, CascadeFitOptions(alpha=0.2, delta=0.1)), records


def _request(row):
    return EvaluationRequest(row.user_text, list(row.documents), row.response)


def test_a_cascade_of_the_real_judges_records_stages_scores_and_tokens(rows, fitted, judge_model, smollm_model):
    policy, records = fitted
    assert [s.model for s in policy.stages] == ["smollm2-135m", "gemma-3-270m"]
    assert policy.stages[0].spec_hash == smollm_model.spec.spec_hash and policy.stages[0].cost > 0
    if not policy.feasible:  # 12 rows cannot certify alpha = 0.2: the fit says so, and how many rows would
        assert policy.rows_needed is None or policy.rows_needed > 12
        assert policy.note
    cascade = build_evaluator("cascade", judge_model, policy=policy, stage_models=[smollm_model, None])
    assert isinstance(cascade, Cascade)
    out = cascade.evaluate_many([_request(r) for r in rows[:4]])
    for resp, rec in zip(out, records[0]):
        meta = resp.metadata["cascade"]
        assert meta["stages"][0]["name"] == "smollm2-135m"
        assert meta["stages"][0]["score"] == pytest.approx(rec.score, abs=1e-6)  # the same judgment as calibration
        assert meta["prompt_tokens"] == sum(s["prompt_tokens"] for s in meta["stages"]) > 0
    bands = Cascade([FactCheckingEvaluator(smollm_model), FactCheckingEvaluator(judge_model)],
                    bands=[(0.3, 0.7), (0.5, 0.5)]).evaluate_many([_request(r) for r in rows[:6]])
    assert all(r.metadata["decided_by"] in (1, 2) for r in bands)
    with pytest.raises(PolicyMismatchError, match=r"^Stage 1 of the cascade \(gemma-3-270m\)"):
        build_evaluator("cascade", judge_model, policy=policy, stage_models=[None, None])


def test_a_cascade_file_is_named_in_the_registry(fitted, judge_model, smollm_model, tmp_path):
    policy, _ = fitted
    path = policy.save(tmp_path / "cascade.json")
    cascade = build_evaluator(f"cascade@{path}", judge_model, stage_models=[smollm_model, None])
    assert [b.lower for b in cascade.bands] == [s.lower for s in policy.stages] and cascade.names[0] == "smollm2-135m"


def test_the_server_applies_a_cascade(fitted, rows, judge_model, smollm_model):
    from judgelab.server import ServerThread, create_app

    policy, _ = fitted
    factory = {"cascade": lambda m, t: build_evaluator("cascade", m, policy=policy, stage_models=[smollm_model, None])}
    server = ServerThread(create_app(judge_model, evaluators=factory), host="127.0.0.1", port=0).start()
    try:
        row = rows[0]
        body = {"evaluator": "cascade", "request": {"user_text": row.user_text, "data_list": list(row.documents),
                                                    "response_content": row.response}}
        got = httpx.post(f"{server.url}/v1/evaluate", json=body, timeout=120).json()
    finally:
        server.stop()
    assert got["metadata"]["evaluator"] == "cascade" and got["metadata"]["decision"] in ("pass", "fail", "abstain")
    assert json.dumps(got["metadata"]["cascade"]["stages"])


def test_a_jury_of_two_families_through_the_registry(rows, judge_model):
    jury = build_evaluator("jury@gemma-3-270m,smollm2-135m", judge_model, n_threads=1)
    try:
        assert jury.jurors[0].model is judge_model  # the given model is reused, the other family loaded
        resp = jury.evaluate(_request(rows[0]))
    finally:
        jury.close()
    assert [j["name"] for j in resp.metadata["jurors"]] == ["gemma-3-270m", "smollm2-135m"]
    assert [j["model"] for j in resp.metadata["jurors"]] == ["gemma-3-270m", "smollm2-135m"] and 0 <= resp.score <= 1
