"""``bench``: several judges on several labelled sets in one resumable run, ranked with paired intervals."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from judgelab.bench._cells import CellSettings, JudgeRun, score_judge
from judgelab.bench._leaderboard import build_leaderboard
from judgelab.bench._records import Leaderboard
from judgelab.bench._report import write_leaderboard
from judgelab.bench._sets import resolve_bench_sets
from judgelab.bench._spec import BenchSpec
from judgelab.calibration.scoring import Executor
from judgelab.errors import DataError

__all__ = ["BenchResult", "bench"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BenchResult:
    """What ``bench`` produced: the leaderboard, the judges' runs and the files written."""

    leaderboard: Leaderboard
    runs: tuple[JudgeRun, ...]
    files: dict[str, Path]
    out: Path

    @property
    def complete(self) -> bool:
        """Whether every cell has a score for every row (otherwise the missing cells are not ranked)."""
        return self.leaderboard.complete


def _writable(out: Path) -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".judgelab-write-check"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise DataError(f"Cannot write to the bench folder {str(out)!r}: {exc.strerror or exc}. Choose a writable "
                        "folder with --out.", path=str(out)) from exc
    return out


def bench(spec: BenchSpec, *, executor: Executor | None = None, progress: bool = True, figures: bool = True,
          command: str = "") -> BenchResult:
    """Score every judge on every set (resuming what ``spec.out`` holds), rank them and write the leaderboard.

    Parameters
    ----------
    spec
        The judges, sets and settings (``BenchSpec.of(models, sets, ...)`` or ``read_bench_file(path)``).
    executor
        Where rows are scored (``LocalExecutor`` by default, ``RayExecutor`` for a Ray cluster: each replica
        loads the judge from its argument).
    progress, figures
        A progress bar per cell; the figures of ``leaderboard.html``.
    command
        The command line, recorded in ``leaderboard.json``.

    Returns
    -------
    BenchResult
        ``complete`` is false when some cell lacks scores (a judge that failed to load, a served judge that
        stopped answering): those cells are named in ``leaderboard.missing`` and ranked nowhere, and rerunning
        resumes them.
    """
    out = _writable(Path(spec.out))
    sets = resolve_bench_sets(spec.sets, task=spec.task, limit=spec.limit, seed=spec.seed)
    (out / "bench.json").write_text(spec.model_dump_json(indent=2, by_alias=True) + "\n", encoding="utf-8")
    settings = CellSettings(batch_size=spec.batch_size, progress=progress, repeats=spec.repeats,
                            repeat_rows=spec.repeat_rows, seed=spec.seed)
    runs = []
    for judge in spec.judges:
        logger.info("bench: judge %s", judge.label)
        runs.append(score_judge(judge, sets, out, executor=executor, settings=settings))
    board, cells = build_leaderboard(spec, sets, runs, out, command=command)
    files = write_leaderboard(board, cells, out, figures=figures)
    return BenchResult(board, tuple(runs), files, out)
