"""Executors without a cluster: block planning, the local executor, factories and the missing-extra error."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judgelab.calibration import EvaluatorFactory, LabelledRow, LocalExecutor, RayExecutor, plan_blocks, read_scores, run
from judgelab.errors import JudgelabError
from judgelab.specs import DEFAULT_MODEL_ID

SRC = Path(__file__).resolve().parents[1] / "src"


def _rows(n_docs: int, per_doc: int, *, interleave: bool = True) -> list[LabelledRow]:
    rows = [
        LabelledRow(id=f"d{d}-c{c}", task="fact-check", documents=[f"document {d}"], response=f"claim {d}.{c}",
                    label=int(c == 0), meta={"pair": f"p{d % 2}"})
        for d in range(n_docs) for c in range(per_doc)
    ]
    if interleave:  # documents interleaved, as a set sorted by claim would be
        rows = sorted(rows, key=lambda r: (r.id.split("-")[1], r.id))
    return rows


def test_blocks_keep_a_documents_rows_together_and_every_row_once():
    rows = _rows(7, 3)
    blocks = plan_blocks(rows, block_size=6)
    seen = [r.id for b in blocks for r in b.rows]
    assert sorted(seen) == sorted(r.id for r in rows)
    where = {r.id: b.index for b in blocks for r in b.rows}
    for d in range(7):
        assert len({where[f"d{d}-c{c}"] for c in range(3)}) == 1
    assert [len(b.rows) for b in blocks] == [6, 6, 6, 3]
    assert [b.index for b in blocks] == list(range(len(blocks)))


def test_a_key_larger_than_a_block_is_one_block_and_pair_and_row_keys():
    rows = _rows(2, 5, interleave=False)
    assert [len(b.rows) for b in plan_blocks(rows, block_size=3)] == [5, 5]
    by_pair = plan_blocks(_rows(4, 2), block_size=100, key="pair")
    assert len(by_pair) == 1
    assert [len(b.rows) for b in plan_blocks(_rows(4, 2), block_size=3, key="row")] == [3, 3, 2]
    assert [len(b.rows) for b in plan_blocks(rows, block_size=4, key=lambda r: r.response[-1])] == [4, 4, 2]
    with pytest.raises(JudgelabError, match="block_size"):
        plan_blocks(rows, block_size=0)
    with pytest.raises(JudgelabError, match="block_key"):
        plan_blocks(rows, block_size=2, key="nope")


def test_local_executor_is_the_default_and_reports_what_it_did(tmp_path, scripted_evaluator):
    rows = _rows(3, 2)
    scores = {r.response: 0.25 + 0.1 * i for i, r in enumerate(rows)}
    ex = LocalExecutor()
    recs = run(scripted_evaluator(scores), rows, out=tmp_path / "s.jsonl", batch_size=4, progress=False, executor=ex)
    assert [r.id for r in recs] == [r.id for r in rows]
    assert ex.report.executor == "local" and ex.report.rows == 6 and ex.report.replica_of() == {r.id: 0 for r in rows}
    assert ex.report.tokens_decoded is None  # a scripted evaluator has no engine
    default = run(scripted_evaluator(scores), rows, out=tmp_path / "t.jsonl", batch_size=4, progress=False)
    assert [r.score for r in default] == [r.score for r in recs]


def test_run_builds_the_evaluator_from_a_factory(tmp_path, scripted_evaluator):
    rows = _rows(2, 2)
    scores = {r.response: 0.6 for r in rows}
    built = []

    def factory():
        built.append(scripted_evaluator(scores))
        return built[-1]

    recs = run(factory, rows, out=tmp_path / "s.jsonl", progress=False)
    assert len(built) == 1 and built[0].seen == 4 and all(r.score == 0.6 for r in recs)
    assert len(read_scores(tmp_path / "s.jsonl")) == 4


def test_evaluator_factory_pickles_and_fills_replica_resources():
    f = EvaluatorFactory("gemma-3-270m", "relevancy", model_options={"n_ctx": 512})
    assert pickle.loads(pickle.dumps(f)) == f
    r = f.for_replica(threads=3, gpus=1)
    assert r.model_options == {"n_ctx": 512, "n_threads": 3, "n_gpu_layers": -1}
    assert EvaluatorFactory(backend="transformers").for_replica(threads=1, gpus=0.5).model_options["device"] == "cuda"
    assert EvaluatorFactory(model_options={"n_threads": 8}).for_replica(threads=1).model_options["n_threads"] == 8
    with pytest.raises(JudgelabError, match="task 'rubric'"):
        EvaluatorFactory(task="rubric")
    # its default judge is the shipped default (the tuned judge), as calibrate's, not the base "at chance"
    assert EvaluatorFactory().model == DEFAULT_MODEL_ID == "gemma-3-270m-judge"


def test_ray_executor_refuses_a_built_evaluator_and_bad_parameters(tmp_path, scripted_evaluator):
    pytest.importorskip("ray")
    with pytest.raises(JudgelabError, match="needs a factory"):
        run(scripted_evaluator({"claim 0.0": 0.5}), _rows(1, 1), out=tmp_path / "s.jsonl", progress=False,
            executor=RayExecutor(replicas=1))
    assert not (tmp_path / "s.jsonl").read_text()  # nothing was scored, nothing written
    with pytest.raises(JudgelabError, match="'replicas' parameter of RayExecutor"):
        RayExecutor(replicas=0)


def test_importing_judgelab_does_not_import_ray_and_a_missing_extra_says_how_to_install():
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(SRC)!r})
        import judgelab.calibration, judgelab.cli
        from judgelab.cli import build_parser
        build_parser()
        assert "ray" not in sys.modules, "importing judgelab imported ray"
        sys.modules["ray"] = None  # as if the extra were not installed
        from judgelab.calibration import EvaluatorFactory, LabelledRow, RayExecutor, run
        from judgelab.errors import ExecutorError
        row = LabelledRow(id="a", task="fact-check", documents=["d"], response="c", label=1)
        try:
            run(EvaluatorFactory(), [row], out=sys.argv[1], progress=False, executor=RayExecutor())
        except ExecutorError as exc:
            assert exc.extra == "ray", exc
            print(exc)
        else:
            raise SystemExit("no error")
    """)
    out = subprocess.run([sys.executable, "-c", code, "/dev/null"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "pip install 'judgelab[ray]'" in out.stdout


def test_cli_ray_options_need_ray(capsys):
    from judgelab.cli import main

    assert main(["calibrate", "--replicas", "3", "--out", "/nonexistent/x"]) == 2  # a user error
    assert "--replicas needs --ray" in capsys.readouterr().err
