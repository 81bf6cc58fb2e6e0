"""From scored cells to the leaderboard: every cell measured, every column ranked, judges compared."""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Sequence
from pathlib import Path

from judgelab.bench._cells import JudgeRun, cell_path
from judgelab.bench._measure import CellScores, cell_scores, measure_cell
from judgelab.bench._ranking import ColumnDraws, agreement_between, mean_draws, rank_column, rank_mean, versus_baseline
from judgelab.bench._records import MEAN_COLUMN, BaselineComparison, CellMetrics, CellOutcome, CellStatus, Kappa, Leaderboard, Ranking, Stability
from judgelab.bench._sets import BenchSet
from judgelab.bench._spec import BenchSpec
from judgelab.bench._stability import stability_of
from judgelab.calibration.data import ScoreRecord, read_scores

__all__ = ["build_leaderboard", "machine_facts"]


def machine_facts() -> dict[str, str]:
    """The machine the costs were measured on: CPU model, its vector extensions, cores, Python and judgelab."""
    from judgelab import __version__

    facts = {"python": platform.python_version(), "judgelab": __version__, "platform": platform.platform(terse=True)}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    lines = text.splitlines()
    model = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), platform.processor())
    flags = set(next((ln.split(":", 1)[1].split() for ln in lines if ln.startswith("flags")), []))
    facts["cpu"] = model or "unknown"
    facts["cpu_flags"] = ", ".join(f for f in ("avx2", "avx512f", "avx512_bf16", "amx_tile") if f in flags) or "none of avx2/avx512/amx"
    import os

    facts["cores"] = str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    return facts


def _status(outcome: CellOutcome | None, n_rows: int, n_scored: int) -> CellStatus:
    if outcome is not None and outcome.status == "failed" and n_scored == 0:
        return "failed"
    return "complete" if n_scored == n_rows else ("failed" if n_scored == 0 else "partial")


def _cells(spec: BenchSpec, sets: Sequence[BenchSet], runs: Sequence[JudgeRun], out: Path) -> list[CellScores]:
    cells = []
    for jr in runs:
        for s in sets:
            path = cell_path(out, jr.judge, s)
            records: list[ScoreRecord] = read_scores(path) if path.exists() else []
            outcome = jr.outcomes.get(s.folder)
            for task in s.by_task:
                c = cell_scores(jr.judge.label, s, task, "complete", records)
                cells.append(_with_status(c, _status(outcome, c.n_rows, len(c.scores))))
    return cells


def _with_status(cell: CellScores, status: CellStatus) -> CellScores:
    import dataclasses

    return dataclasses.replace(cell, status=status)


def _columns(cells: Sequence[CellScores]) -> dict[str, list[CellScores]]:
    by: dict[str, list[CellScores]] = {}
    for c in cells:
        by.setdefault(c.column, []).append(c)
    return by


def _rankings(spec: BenchSpec, columns: dict[str, list[CellScores]], judges: Sequence[str],
              missing: dict[str, str]) -> tuple[list[Ranking], list[BaselineComparison], dict[str, bool]]:
    rankings: list[Ranking] = []
    draws: list[ColumnDraws] = []
    for i, cells in enumerate(columns.values()):
        ranking, d = rank_column(cells, spec.rank_by, n_resamples=spec.n_resamples, seed=spec.seed, index=i)
        rankings.append(ranking)
        draws.append(d)
    rankings.insert(0, rank_mean(draws, judges, spec.rank_by, missing))
    if spec.baseline is None:
        return rankings, [], {}
    mean = mean_draws(draws, judges, missing)
    found = [versus_baseline(d, spec.baseline, spec.rank_by) for d in [mean, *draws]]
    versus = [v for v in found if v is not None]
    return rankings, versus, _admitted(versus, judges, spec.baseline, len(draws))


def _admitted(versus: Sequence[BaselineComparison], judges: Sequence[str], baseline: str, n_columns: int) -> dict[str, bool]:
    """Per judge: compared with the baseline in every column, worse beyond the interval in none, above it on the mean."""
    out = {}
    for j in judges:
        if j == baseline:
            continue
        mine = [(v.column, e) for v in versus for e in v.entries if e.judge == j]
        columns = [e for c, e in mine if c != MEAN_COLUMN]
        mean = next((e for c, e in mine if c == MEAN_COLUMN), None)
        out[j] = (len(columns) == n_columns and not any(e.worse for e in columns) and mean is not None
                  and mean.difference.estimate is not None and mean.difference.estimate > 0)
    return out


def _stability(spec: BenchSpec, cells: Sequence[CellScores], runs: Sequence[JudgeRun], out: Path) -> list[Stability]:
    entries = {jr.judge.label: jr.judge for jr in runs}
    found = []
    for c in cells:
        if c.status != "complete":
            continue
        st = stability_of(c, cell_path(out, entries[c.judge], c.bench_set), repeats=spec.repeats,
                          n_rows=spec.repeat_rows, seed=spec.seed)
        if st is not None:
            found.append(st)
    return found


def build_leaderboard(spec: BenchSpec, sets: Sequence[BenchSet], runs: Sequence[JudgeRun], out: Path, *,
                      command: str = "") -> tuple[Leaderboard, list[CellScores]]:
    """Measure every cell of the bench from its files and rank the judges (no model is needed); also the cells."""
    cells = _cells(spec, sets, runs, out)
    metrics: list[CellMetrics] = [measure_cell(c, n_resamples=spec.n_resamples, seed=spec.seed) for c in cells]
    missing = [o for jr in runs for o in jr.outcomes.values() if o.status != "complete"]
    judges = [jr.judge.label for jr in runs]
    unranked = {o.judge: f"cell {o.set} is {o.status}: {o.error}" for o in missing}
    columns = _columns(cells)
    kappa: list[Kappa] = [k for col in columns.values() for k in agreement_between([c for c in col if c.scores])]
    settings = spec.model_dump(mode="json", exclude={"judges", "sets", "out"})
    rankings, versus, admitted = _rankings(spec, columns, judges, unranked)
    board = Leaderboard(
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), command=command,
        machine=machine_facts(), settings=settings, judges=tuple(judges),
        sets={s.argument: s.description for s in sets}, metric=spec.rank_by, complete=not missing,
        costs=tuple(jr.cost for jr in runs), cells=tuple(metrics),
        rankings=tuple(rankings), versus_baseline=tuple(versus), admitted=admitted, baseline=spec.baseline,
        kappa=tuple(kappa),
        stability=tuple(_stability(spec, cells, runs, out)), missing=tuple(missing),
    )
    return board, cells
