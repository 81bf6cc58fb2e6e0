"""``judgelab bench`` on real judges: the embedded tuned judge, the base Gemma 3 270M and the base served by a real
``judgelab serve`` on 127.0.0.1 (asked over the OpenAI protocol), on two small sets cut from the starter set.

One bench file runs first; the tests after it rerun the same bench folder to check resume (a lost tail of a cell is
rescored, nothing else), that a changed row invalidates only its own cells, and the figures. Faults (a judge that
cannot load, a served judge nobody answers for) and bad sets (one class, a task no judge has) come last.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from judgelab.bench import BenchSpec, Leaderboard, bench, bench_split, read_bench_file, safe_folder
from judgelab.calibration import LabelledRow, load_rows
from judgelab.cli import main
from judgelab.errors import PARTIAL_RUN_EXIT, DataError, ParameterError
from judgelab.server import ServerConfig, ServerThread, create_app

KEY = "bench-test-key"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def served(judge_model):
    """The session's gemma-3-270m behind a real ``judgelab serve`` app on 127.0.0.1."""
    server = ServerThread(create_app(judge_model, ServerConfig(api_key=KEY)), host="127.0.0.1", port=0).start()
    yield server
    server.stop()


def _write(path: Path, rows: list[LabelledRow]) -> Path:
    path.write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> tuple[Path, Path]:
    """Two small fact-check sets from the starter set (12 rows each, both labels, dev and test rows)."""
    rows = [r for r in load_rows(REPO / "calibration" / "starter.jsonl").rows if r.task == "fact-check"]
    folder = tmp_path_factory.mktemp("bench-sets")
    picked = []
    for split in ("dev", "test"):
        for label in (0, 1):
            picked.append([r for r in rows if r.split == split and r.label == label])
    a = [r for group in picked for r in group[:3]]
    b = [r for group in picked for r in group[3:6]]
    return _write(folder / "a.jsonl", a), _write(folder / "b.jsonl", b)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def first_bench(tmp_path_factory, sets, served):
    """The bench from a bench file: three judges x two sets, one stability repeat."""
    folder = tmp_path_factory.mktemp("bench")
    remote = f"openai:{served.url}/v1#gemma-3-270m"
    (folder / "bench.toml").write_text(
        f'out = "out"\nsets = ["{sets[0]}", "{sets[1]}"]\nrepeats = 1\nrepeat_rows = 4\nn_resamples = 200\n'
        '[[judge]]\nmodel = "gemma-3-270m-judge"\n[[judge]]\nmodel = "gemma-3-270m"\n'
        f'[[judge]]\nmodel = "{remote}"\n', encoding="utf-8")
    return folder, remote


def _board(out: Path) -> Leaderboard:
    return Leaderboard.model_validate_json((out / "leaderboard.json").read_text(encoding="utf-8"))


def test_a_bench_file_scores_every_cell_and_ranks_the_judges(first_bench, sets, monkeypatch, capsys):
    folder, remote = first_bench
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert main(["bench", str(folder / "bench.toml"), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    out = folder / "out"
    assert "| judge | auroc (mean over sets) |" in printed and "leaderboard.html" in printed
    board = _board(out)
    assert board.complete and not board.missing
    assert board.judges == ("gemma-3-270m-judge", "gemma-3-270m", remote)
    # one folder per judge as given (the served judge's shows its URL and name), one per set
    served_folder = safe_folder(remote)
    assert "127.0.0.1" in served_folder and served_folder.endswith(served_folder[-6:])
    for judge in ("gemma-3-270m-judge", "gemma-3-270m", served_folder):
        for s in sets:
            assert (out / "cells" / judge / safe_folder(str(s)) / "scores.jsonl").exists()
    # the served base judge reads the same probabilities as the in-process base judge
    local = [json.loads(x) for x in (out / "cells" / "gemma-3-270m" / safe_folder(str(sets[0])) / "scores.jsonl").read_text().splitlines()]
    far = [json.loads(x) for x in (out / "cells" / served_folder / safe_folder(str(sets[0])) / "scores.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r["score"] for r in far}
    assert max(abs(r["score"] - by_id[r["id"]]) for r in local) < 0.02
    mean = board.rankings[0]
    assert mean.column == "mean over sets" and len(board.rankings) == 3
    assert sum(e.best for e in mean.entries) == 1 and {e.judge for e in mean.entries} == set(board.judges)
    best = next(e for e in mean.entries if e.best)
    assert best.difference.estimate == 0.0
    for e in mean.entries:
        d = e.difference
        assert d.low is not None and d.high is not None and d.low <= d.estimate <= d.high
        assert e.tied_with_best == (not e.best and d.low <= 0 <= d.high)
    for cell in board.cells:
        assert cell.n_test == 6 and cell.n_dev == 6 and cell.coverage == 1.0 and cell.auroc is not None
        assert cell.prompt_tokens_per_judgment and cell.seconds_per_judgment
    costs = {c.judge: c for c in board.costs}
    assert costs["gemma-3-270m"].peak_rss_mib and not costs["gemma-3-270m"].remote
    assert costs[remote].remote and costs[remote].latency_p50_seconds and costs[remote].latency_p95_seconds
    assert len(board.kappa) == 2 * 3 and len(board.stability) == 3 * 2
    # an in-process llama.cpp judge reads the same logits again; the figure is measured, not assumed
    assert all(s.flip_rate is not None and s.n_failed == 0 for s in board.stability)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "## Cost" in md and "McNemar p" in md and "figures/forest.png" in md
    assert (out / "figures" / "forest.png").stat().st_size > 1000
    assert "data:image/png;base64," in (out / "leaderboard.html").read_text(encoding="utf-8")


def test_a_rerun_keeps_every_scored_row_and_scores_only_the_lost_ones(first_bench, sets, monkeypatch):
    folder, remote = first_bench
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    spec = read_bench_file(folder / "bench.toml")
    cell = folder / "out" / "cells" / "gemma-3-270m-judge" / safe_folder(str(sets[1])) / "scores.jsonl"
    lines = cell.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = "".join(lines[:-3])
    cell.write_text(kept + lines[-3][: len(lines[-3]) // 2], encoding="utf-8")  # killed mid-write
    result = bench(spec, progress=False)
    scored = {(jr.judge.label, o.set): o.scored_now for jr in result.runs for o in jr.outcomes.values()}
    assert scored.pop(("gemma-3-270m-judge", str(sets[1]))) == 3
    assert set(scored.values()) == {0}
    assert cell.read_text(encoding="utf-8").startswith(kept) and result.complete


def test_a_changed_row_rescores_only_its_own_cells(first_bench, sets, monkeypatch):
    folder, remote = first_bench
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rows = load_rows(sets[1]).rows
    changed = rows[0].model_copy(update={"response": rows[0].response + " It was also painted blue."})
    original = sets[1].read_text(encoding="utf-8")
    try:
        _write(sets[1], [changed, *rows[1:]])
        result = bench(read_bench_file(folder / "bench.toml"), progress=False)
    finally:
        sets[1].write_text(original, encoding="utf-8")
    scored = {(jr.judge.label, o.set): o.scored_now for jr in result.runs for o in jr.outcomes.values()}
    assert {k: v for k, v in scored.items() if k[1] == str(sets[1])} == {(j, str(sets[1])): 1 for j in result.leaderboard.judges}
    assert {v for k, v in scored.items() if k[1] == str(sets[0])} == {0}


def test_a_baseline_compares_every_judge_with_it_and_says_which_are_admitted(first_bench, monkeypatch):
    folder, remote = first_bench
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    spec = read_bench_file(folder / "bench.toml")
    spec = BenchSpec.checked({**spec.model_dump(by_alias=True), "baseline": "gemma-3-270m"})
    board = bench(spec, progress=False, figures=False).leaderboard
    assert board.baseline == "gemma-3-270m" and set(board.admitted) == {"gemma-3-270m-judge", remote}
    assert [v.column for v in board.versus_baseline] == [r.column for r in board.rankings]
    for v, r in zip(board.versus_baseline, board.rankings):
        value = {e.judge: e.value for e in r.entries}
        for e in v.entries:  # the same resamples: judge minus baseline is the difference of the two figures
            assert e.difference.estimate == pytest.approx(value[e.judge] - value["gemma-3-270m"], abs=1e-12)
            assert e.worse == (e.difference.high < 0) and e.better == (e.difference.low > 0)
    for judge, ok in board.admitted.items():
        entries = [e for v in board.versus_baseline for e in v.entries if e.judge == judge]
        assert ok == (not any(e.worse for e in entries[1:]) and entries[0].difference.estimate > 0)
    with pytest.raises(ParameterError, match="baseline 'nobody' is none of the judges"):
        BenchSpec.checked({**spec.model_dump(by_alias=True), "baseline": "nobody"})


def test_a_judge_that_cannot_load_and_one_nobody_serves_are_missing_cells_and_the_exit_is_partial(
        tmp_path, sets, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    gone = f"openai:http://127.0.0.1:{_closed_port()}/v1#gemma-3-270m"
    code = main(["bench", "--model", "gemma-3-270m", "--model", str(tmp_path / "missing.gguf"), "--model", gone,
                 "--set", str(sets[0]), "--out", str(tmp_path / "out"), "--no-progress", "--no-plots", "--resamples", "50"])
    captured = capsys.readouterr()
    assert code == PARTIAL_RUN_EXIT
    assert "2 cell(s) of the bench lack scores" in captured.err and "resumes" in captured.err
    board = _board(tmp_path / "out")
    assert not board.complete
    assert {o.judge for o in board.missing} == {str(tmp_path / "missing.gguf"), gone}
    assert all(o.error and "\n" not in o.error for o in board.missing)
    for ranking in board.rankings:
        assert [e.judge for e in ranking.entries] == ["gemma-3-270m"]
        assert set(ranking.not_ranked) == {str(tmp_path / "missing.gguf"), gone}
    assert "Missing cells" in (tmp_path / "out" / "leaderboard.md").read_text(encoding="utf-8")


def test_a_set_with_one_class_or_an_unknown_task_is_named_before_any_judge_loads(tmp_path, sets):
    rows = [r for r in load_rows(sets[0]).rows if r.label == 1]
    one = _write(tmp_path / "one.jsonl", rows)
    with pytest.raises(DataError, match=r"one.jsonl.*all 6 row\(s\) are labelled supported.*Add rows of the other label"):
        bench(BenchSpec.of(["no-such-judge-is-loaded"], [str(one)], out=str(tmp_path / "o")), progress=False)
    criteria = _write(tmp_path / "criteria.jsonl", [r.model_copy(update={"task": "criteria", "labels": {"a": r.label}})
                                                    for r in load_rows(sets[0]).rows])
    with pytest.raises(DataError, match="task 'criteria', which no judge of a bench can score.*--task"):
        bench(BenchSpec.of(["no-such-judge-is-loaded"], [str(criteria)], out=str(tmp_path / "o")), progress=False)
    with pytest.raises(ParameterError, match="two judges are both named"):
        BenchSpec.of(["gemma-3-270m", "gemma-3-270m"], [str(one)])
    assert main(["bench", "--set", str(one)]) == 2


def test_folders_never_collide_and_the_split_is_by_unit_and_the_same_for_every_judge():
    assert safe_folder("gemma-3-270m") == "gemma-3-270m"
    names = {safe_folder(a) for a in ("a/b", "a_b", "a:b", "a b", "openai:http://h:1/v1#m", "openai:http://h:1/v1#n")}
    assert len(names) == 6
    rows = [LabelledRow(id=f"r{i}", task="fact-check", response="x", label=i % 2, meta={"pair": f"u{i // 2}"})
            for i in range(40)]
    split = bench_split(rows, seed=0)
    assert split == bench_split(list(reversed(rows)), seed=0)  # the order of the rows does not matter
    for i in range(0, 40, 2):
        assert split[f"r{i}"] == split[f"r{i + 1}"]  # a unit stays on one side
    assert 0.3 < np.mean([v == "test" for v in split.values()]) < 0.7
    assert split != bench_split(rows, seed=1)


def test_a_transformers_judge_is_benched_beside_its_gguf_twin(tmp_path, sets):
    """``--model transformers:ID`` loads the judge on torch; its cell sits in its own folder beside the GGUF one's."""
    pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")
    out = tmp_path / "out"
    assert main(["bench", "--model", "transformers:smollm2-135m", "--model", "smollm2-135m", "--set", str(sets[0]),
                 "--out", str(out), "--no-progress", "--no-plots", "--resamples", "50", "--threads", "1"]) == 0
    board = _board(out)
    assert board.judges == ("transformers:smollm2-135m", "smollm2-135m") and board.complete
    folders = sorted(p.name for p in (out / "cells").iterdir())
    assert folders[0] == "smollm2-135m" and folders[1].startswith("transformers_smollm2-135m-")
    torch_scores = {json.loads(x)["id"]: json.loads(x)["score"]
                    for x in (out / "cells" / folders[1] / safe_folder(str(sets[0])) / "scores.jsonl").read_text().splitlines()}
    gguf_scores = {json.loads(x)["id"]: json.loads(x)["score"]
                   for x in (out / "cells" / folders[0] / safe_folder(str(sets[0])) / "scores.jsonl").read_text().splitlines()}
    assert torch_scores.keys() == gguf_scores.keys() and len(torch_scores) == 12
    # the float32 torch model and the 4-bit GGUF read one judge: their scores rank the rows alike
    ids = sorted(torch_scores)
    rho = np.corrcoef(np.argsort(np.argsort([torch_scores[i] for i in ids])),
                      np.argsort(np.argsort([gguf_scores[i] for i in ids])))[0, 1]
    assert rho > 0.5, rho
