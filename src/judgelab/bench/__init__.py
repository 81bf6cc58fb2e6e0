"""``judgelab bench``: several judges x several labelled sets in one resumable run, ranked with paired intervals.

Above calibration, beside tuning: it scores through calibration's scoring layer (``run``, the
executors, the resume plan) and measures with its analysis functions; nothing below imports it.

- ``BenchSpec``, ``JudgeEntry``, ``read_bench_file``: what a bench measures (command line or a TOML bench file);
- ``bench``: score every cell (``DIR/cells/<judge>/<set>/scores.jsonl``, resumable), rank, write the leaderboard;
- ``Leaderboard`` and its records (``CellMetrics``, ``Ranking``, ``RankEntry``, ``JudgeCost``, ``Kappa``,
  ``Stability``): ``leaderboard.json``, read back with ``read_leaderboard``;
- ``bench_split``: the one dev/test split of a set that every judge shares;
- ``disagreement_rows``: the rows where judges disagree with the label and with each other (for ``judgelab view``).
"""

from judgelab.bench._bench import BenchResult, bench
from judgelab.bench._cells import CellSettings, JudgeRun, cell_path, score_judge
from judgelab.bench._records import (
    LEADERBOARD_VERSION,
    MEAN_COLUMN,
    BaselineComparison,
    BaselineEntry,
    CellMetrics,
    CellOutcome,
    CellStatus,
    JudgeCost,
    Kappa,
    Leaderboard,
    McNemar,
    RankEntry,
    Ranking,
    Stability,
)
from judgelab.bench._report import leaderboard_report, leaderboard_table, write_leaderboard
from judgelab.bench._rows import BenchRow, JudgeVerdict, disagreement_rows, is_bench, read_leaderboard
from judgelab.bench._sets import BenchSet, resolve_bench_sets
from judgelab.bench._spec import BenchSpec, JudgeEntry, read_bench_file, safe_folder
from judgelab.bench._split import bench_split

__all__ = [
    "BaselineComparison",
    "BaselineEntry",
    "BenchResult",
    "BenchRow",
    "BenchSet",
    "BenchSpec",
    "CellMetrics",
    "CellOutcome",
    "CellSettings",
    "CellStatus",
    "JudgeCost",
    "JudgeEntry",
    "JudgeRun",
    "JudgeVerdict",
    "Kappa",
    "LEADERBOARD_VERSION",
    "Leaderboard",
    "MEAN_COLUMN",
    "McNemar",
    "RankEntry",
    "Ranking",
    "Stability",
    "bench",
    "bench_split",
    "cell_path",
    "disagreement_rows",
    "is_bench",
    "leaderboard_report",
    "leaderboard_table",
    "read_bench_file",
    "read_leaderboard",
    "resolve_bench_sets",
    "safe_folder",
    "score_judge",
    "write_leaderboard",
]
