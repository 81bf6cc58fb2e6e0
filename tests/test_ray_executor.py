"""RayExecutor on a real local Ray cluster (127.0.0.1, 2 CPUs): two replicas of the real GGUF judge.

Each replica loads the 253 MB model once, so the sets are small (18 rows).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from judgelab.calibration import CalibrationOptions, EvaluatorFactory, LabelledRow, RayExecutor, calibrate, load_rows, read_scores, run, write_rows  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
N_DOCS, PER_DOC = 6, 3


@pytest.fixture(scope="module")
def ray_cluster():
    """A two-CPU Ray cluster on loopback for this module (the replicas' model memory goes with it)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    if ray.is_initialized():  # pragma: no cover - another module left one running
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             object_store_memory=100 * 1024**2, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def doc_rows() -> list[LabelledRow]:
    """18 fact-check rows: 6 starter documents with 3 claims each, the documents interleaved."""
    starter = [r for r in load_rows(REPO / "calibration" / "starter.jsonl").rows if r.task == "fact-check"][:N_DOCS]
    rows = [
        LabelledRow(id=f"{r.id}-{j}", task="fact-check", documents=r.documents,
                    response=starter[(i + j) % N_DOCS].response, label=int(j == 0), meta={"pair": r.id},
                    split="dev" if i % 2 else "test")
        for j in range(PER_DOC) for i, r in enumerate(starter)
    ]
    return rows


@pytest.fixture(scope="module")
def local_reference(judge_model, doc_rows, tmp_path_factory):
    """The local run of the same rows (the session's model, caches emptied so its tokens count from zero)."""
    from judgelab.calibration import LocalExecutor
    from judgelab.evaluators import FactCheckingEvaluator

    judge_model.reset_caches()
    ex = LocalExecutor()
    out = tmp_path_factory.mktemp("local") / "scores.jsonl"
    recs = run(FactCheckingEvaluator(judge_model), doc_rows, out=out, progress=False, executor=ex)
    return {r.id: r for r in recs}, ex.report, out


def _factory() -> EvaluatorFactory:
    return EvaluatorFactory("gemma-3-270m", "fact-check")


def _same_answers(records, reference):
    for r in records:
        ref = reference[r.id]
        assert (r.score, r.probabilities, r.raw_score, r.passed, r.chunks, r.prompt_tokens) == (
            ref.score, ref.probabilities, ref.raw_score, ref.passed, ref.chunks, ref.prompt_tokens), r.id
        assert r.model_dump(exclude={"seconds"}) == ref.model_dump(exclude={"seconds"})


def _ids_once(path: Path, rows) -> None:
    ids = [json.loads(line)["id"] for line in path.read_text().splitlines()]
    assert sorted(ids) == sorted(r.id for r in rows), "each row exactly once"


def test_ray_scores_equal_local_bit_for_bit_and_a_document_stays_on_one_replica(ray_cluster, doc_rows, local_reference, tmp_path):
    reference, local_report, _ = local_reference
    ex = RayExecutor(replicas=2, replica_threads=1, block_size=3)  # six blocks: both replicas get work
    records = run(_factory(), doc_rows, out=tmp_path / "scores.jsonl", progress=False, executor=ex)
    assert [r.id for r in records] == [r.id for r in doc_rows]
    _same_answers(records, reference)
    _ids_once(tmp_path / "scores.jsonl", doc_rows)
    report = ex.report
    assert {r.replica for r in report.replicas} == {0, 1} and all(r.rows > 0 for r in report.replicas)
    replica_of = report.replica_of()
    for row in doc_rows:  # all claims about one document were judged by one replica
        assert len({replica_of[r.id] for r in doc_rows if r.documents == row.documents}) == 1
    # grouping the interleaved documents lets each replica reuse a document's prefix
    assert report.tokens_decoded is not None and local_report.tokens_decoded is not None
    assert report.tokens_decoded < local_report.tokens_decoded
    assert report.tokens_decoded == sum(r.tokens_decoded for r in report.replicas)


def test_calibrate_on_ray_gives_the_local_metrics(ray_cluster, judge_model, doc_rows, local_reference, tmp_path):
    common = {"options": CalibrationOptions(n_resamples=50, k_folds=3, progress=False, figures=False)}
    # the local calibration analyses the local reference run's scores (scored above, not again)
    (tmp_path / "local").mkdir()
    shutil.copy(local_reference[2], tmp_path / "local" / "scores.jsonl")
    calibrate(judge_model, doc_rows, tmp_path / "local", **common)
    calibrate("gemma-3-270m", doc_rows, tmp_path / "ray", executor=RayExecutor(replicas=2, block_size=6), **common)
    local = json.loads((tmp_path / "local" / "metrics.json").read_text())
    remote = json.loads((tmp_path / "ray" / "metrics.json").read_text())
    assert _differences(remote, local) == []


def _differences(a, b, path=""):
    """The paths where two JSON values differ (timestamps such as a policy's ``created`` left out)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) if k != "created"
                for d in _differences(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def test_a_replica_killed_mid_run_loses_no_row_and_writes_none_twice(ray_cluster, doc_rows, local_reference, tmp_path):
    reference, _, _ = local_reference
    out = tmp_path / "scores.jsonl"
    ex = RayExecutor(replicas=2, replica_threads=1, block_size=3)
    killed: list[int] = []

    def kill_replica_0_after_the_first_block():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if 0 in ex.replica_pids and out.exists() and out.read_text().count("\n") >= 3:
                pid = ex.replica_pids[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_replica_0_after_the_first_block, daemon=True)
    killer.start()
    records = run(_factory(), doc_rows, out=out, progress=False, executor=ex)
    killer.join(timeout=5)
    assert killed, "the replica was never killed"
    assert ex.report.retried_blocks >= 1 and ex.report.restarted_replicas >= 1
    _ids_once(out, doc_rows)
    _same_answers(records, reference)
    assert killed[0] not in ex.replica_pids.values()


def test_driver_killed_mid_run_then_the_same_command_resumes(ray_cluster, judge_model, doc_rows, local_reference, tmp_path):
    from judgelab.evaluators import FactCheckingEvaluator

    reference, _, _ = local_reference
    write_rows(doc_rows, tmp_path / "set.jsonl")
    out = tmp_path / "run"
    scores = out / "scores.jsonl"
    # three rows scored locally first: the Ray run must skip them
    run(FactCheckingEvaluator(judge_model), doc_rows[:3], out=scores, progress=False)
    cmd = [sys.executable, "-c", "import sys; from judgelab.cli import main; sys.exit(main(sys.argv[1:]))",
           "calibrate", "--model", judge_model.spec.id, "--set", str(tmp_path / "set.jsonl"), "--out", str(out),
           "--ray", ray_cluster, "--replicas", "2", "--block-size", "3", "--resamples", "50", "--no-plots", "--no-progress"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and driver.poll() is None and scores.read_text().count("\n") < 6:
            time.sleep(0.05)
        assert driver.poll() is None, f"the driver ended before it could be killed:\n{driver.stdout.read()}"
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
    written = len(read_scores(scores, repair=True))
    assert 6 <= written < len(doc_rows)
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    # the rerun scored only what was missing, and says so
    assert f"ray: {len(doc_rows) - written} rows" in again.stdout, again.stdout
    _ids_once(scores, doc_rows)
    _same_answers(read_scores(scores), reference)
    assert (out / "metrics.json").exists()


def test_transformers_float32_on_ray_matches_local_within_1e_6(ray_cluster, doc_rows, tmp_path):
    """transformers pads each batch to its longest prompt, so a float32 score depends on its batch
    (up to 1.7e-6 measured when Ray grouped these rows by document): blocks of whole local batches
    (``block_key="row"``) give every replica the local run's batches."""
    pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")
    from judgelab.calibration import LocalExecutor

    rows = [r for r in doc_rows if r.documents in (doc_rows[0].documents, doc_rows[1].documents)]  # 2 documents, 6 rows
    factory = EvaluatorFactory("gemma-3-270m", "fact-check", backend="transformers",
                               model_options={"device": "cpu", "dtype": "float32", "n_threads": 1})
    # the local run first: it converts the GGUF into the shared cache (once per machine), the replicas reuse it
    local = run(factory, rows, out=tmp_path / "local.jsonl", batch_size=3, progress=False, executor=LocalExecutor())
    ex = RayExecutor(replicas=2, replica_threads=1, block_size=3, block_key="row")
    remote = run(factory, rows, out=tmp_path / "ray.jsonl", batch_size=3, progress=False, executor=ex)
    assert sum(r.rows for r in ex.report.replicas) == len(rows)
    assert [r.id for r in remote] == [r.id for r in local]
    for a, b in zip(local, remote):
        assert abs(a.score - b.score) <= 1e-6, (a.id, a.score, b.score)
        assert set(a.probabilities) == set(b.probabilities)
        assert all(abs(a.probabilities[k] - b.probabilities[k]) <= 1e-6 for k in a.probabilities)


def test_a_bench_on_ray_scores_every_cell_as_the_local_bench_does(ray_cluster, doc_rows, local_reference, tmp_path):
    """``judgelab bench --ray``: the cells go through the RayExecutor and hold the local run's answers."""
    from judgelab.bench import BenchSpec, bench, cell_path, resolve_bench_sets

    reference, _, _ = local_reference
    write_rows(doc_rows, tmp_path / "docs.jsonl")
    spec = BenchSpec.of(["gemma-3-270m"], [str(tmp_path / "docs.jsonl")], out=str(tmp_path / "bench"), n_resamples=50)
    ex = RayExecutor(replicas=2, replica_threads=1, block_size=3)
    result = bench(spec, executor=ex, progress=False, figures=False)
    assert result.complete and {r.replica for r in ex.report.replicas} == {0, 1}
    records = read_scores(cell_path(tmp_path / "bench", spec.judges[0], resolve_bench_sets(spec.sets)[0]))
    _same_answers(records, reference)
