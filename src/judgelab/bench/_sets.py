"""The sets of a bench, resolved once before any judge loads: rows by task, checked, with their split."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgelab.bench._spec import safe_folder
from judgelab.bench._split import Side, bench_split
from judgelab.calibration.data import LabelledRow, resolve_set, rows_by_task
from judgelab.errors import DataError
from judgelab.evaluators import evaluator_tasks

__all__ = ["BenchSet", "resolve_bench_sets"]

#: The set argument that names the project's starter set.
STARTER = "starter"


@dataclass(frozen=True)
class BenchSet:
    """One set of a bench: its argument as given, its folder, its rows by task and the shared split."""

    argument: str
    description: str
    by_task: dict[str, list[LabelledRow]]
    split: dict[str, dict[str, Side]]

    @property
    def folder(self) -> str:
        return safe_folder(self.argument)

    def key(self, task: str) -> str:
        """How tables name one task of this set: the set, and the task when the set has several."""
        return self.argument if len(self.by_task) == 1 else f"{self.argument} / {task}"

    @property
    def n_rows(self) -> int:
        return sum(len(rows) for rows in self.by_task.values())


def _check(argument: str, task: str, rows: Sequence[LabelledRow]) -> None:
    if task not in evaluator_tasks():
        raise DataError(
            f"Set {argument!r} has {len(rows)} row(s) of task {task!r}, which no judge of a bench can score: a bench "
            f"builds each judge's default evaluator, which exists for {', '.join(evaluator_tasks())}. Keep the "
            "other tasks with --task, or score those rows with 'judgelab calibrate --evaluator NAME'.")
    labels = {int(r.label) for r in rows}
    if len(labels) < 2:
        only = "supported (1)" if labels == {1} else "unsupported (0)"
        raise DataError(
            f"Set {argument!r} task {task!r}: all {len(rows)} row(s) are labelled {only}, so no threshold can be "
            "tuned and AUROC and balanced accuracy are undefined. Add rows of the other label, or raise --limit "
            "(it keeps whole units of both labels), or drop the set.")


def resolve_bench_sets(arguments: Sequence[str], *, task: Sequence[str] = (), limit: int | None = None,
                       seed: int = 0) -> list[BenchSet]:
    """Every set of a bench, its rows by task (filtered and limited) and split; ``DataError`` before any scoring."""
    out = []
    for argument in arguments:
        rows, description, _ = resolve_set(None if argument == STARTER else argument)
        by_task = rows_by_task(rows, task=list(task) or None, limit=limit, seed=seed)
        if not by_task:
            raise DataError(f"Set {argument!r} ({description}) has no rows" +
                            (f" of task(s) {list(task)}" if task else "") + ".")
        for t, rs in by_task.items():
            _check(argument, t, rs)
        split = {t: bench_split(rs, seed=seed) for t, rs in by_task.items()}
        out.append(BenchSet(argument, description, by_task, split))
    folders = [s.folder for s in out]
    if len(set(folders)) < len(folders):
        raise DataError(f"Two sets of this bench map to one folder ({folders}); name each set once.")
    return out
