"""A bench folder read back, and the rows where its judges disagree with the label and with each other.

What ``judgelab view DIR`` shows for a bench: for every row of every set, each judge's score and its
verdict at the judge's tuned threshold (``leaderboard.json``), worst first: rows most judges get wrong,
and among those the ones where the judges also disagree with each other, the most confident first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from judgelab.bench._cells import cell_path
from judgelab.bench._records import LEADERBOARD_VERSION, Leaderboard
from judgelab.bench._sets import resolve_bench_sets
from judgelab.bench._spec import BenchSpec
from judgelab.calibration.data import read_scores
from judgelab.errors import DataError

__all__ = ["BenchRow", "JudgeVerdict", "disagreement_rows", "is_bench", "read_leaderboard"]


def is_bench(folder: str | Path) -> bool:
    """Whether ``folder`` is a bench folder (it holds ``leaderboard.json`` and ``bench.json``)."""
    folder = Path(folder)
    return (folder / "leaderboard.json").is_file() and (folder / "bench.json").is_file()


def read_leaderboard(folder: str | Path) -> Leaderboard:
    """``leaderboard.json`` of a bench folder; a ``DataError`` naming the file when it cannot be read."""
    path = Path(folder) / "leaderboard.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"Cannot read {path}: {exc}. Rerun 'judgelab bench' into that folder.", path=str(path)) from exc
    version = data.get("version") if isinstance(data, dict) else None
    if version != LEADERBOARD_VERSION:
        raise DataError(f"{path} is leaderboard version {version!r}; this judgelab reads version {LEADERBOARD_VERSION}. "
                        "Rerun the bench with this judgelab (the cells are reused).", path=str(path))
    return Leaderboard.model_validate(data)


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge's score of a row and its verdict at the judge's threshold (``None`` without a score)."""

    judge: str
    score: float | None
    threshold: float | None
    passed: bool | None


@dataclass(frozen=True)
class BenchRow:
    """One row of a bench set with every judge's score and verdict."""

    column: str
    id: str
    split: str
    label: int
    documents: tuple[str, ...]
    user_text: str
    response: str
    verdicts: tuple[JudgeVerdict, ...]

    @property
    def n_wrong(self) -> int:
        return sum(1 for v in self.verdicts if v.passed is not None and v.passed != bool(self.label))

    @property
    def split_verdict(self) -> bool:
        """Whether the judges that scored the row disagree with each other."""
        return len({v.passed for v in self.verdicts if v.passed is not None}) > 1

    @property
    def confidence(self) -> float:
        """How far the wrong judges' scores lie past their thresholds, summed (the sort's tie-break)."""
        return sum(abs(v.score - v.threshold) for v in self.verdicts if v.score is not None and v.threshold is not None
                   and v.passed is not None and v.passed != bool(self.label))


def disagreement_rows(folder: str | Path) -> list[BenchRow]:
    """Every row of the bench's sets, most judges wrong first, then split verdicts, then the most confident."""
    folder = Path(folder)
    board = read_leaderboard(folder)
    spec = BenchSpec.model_validate_json((folder / "bench.json").read_text(encoding="utf-8"))
    sets = resolve_bench_sets(spec.sets, task=spec.task, limit=spec.limit, seed=spec.seed)
    thresholds = {(m.judge, m.column): m.threshold for m in board.cells}
    out: list[BenchRow] = []
    for s in sets:
        scores = {}
        for j in spec.judges:
            path = cell_path(folder, j, s)
            scores[j.label] = {r.id: r.score for r in read_scores(path) if r.ok} if path.exists() else {}
        for task, rows in s.by_task.items():
            column = s.key(task)
            for r in rows:
                verdicts = []
                for j in spec.judges:
                    sc = scores[j.label].get(r.id)
                    t = thresholds.get((j.label, column))
                    verdicts.append(JudgeVerdict(j.label, sc, t, None if sc is None or t is None else sc >= t))
                out.append(BenchRow(column, r.id, s.split[task][r.id], int(r.label), tuple(r.documents), r.user_text,
                                    r.response, tuple(verdicts)))
    out.sort(key=lambda b: (-b.n_wrong, not b.split_verdict, -b.confidence))
    return out
