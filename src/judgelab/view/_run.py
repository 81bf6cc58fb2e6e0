"""A run as the viewer holds it: records, metrics, thresholds, calibrators and the set's rows, read once.

Everything is read through calibration's public readers (``read_scores``, ``read_metrics``,
``load_calibrator``, ``resolve_set``); the columns the table sorts and filters on are numpy arrays
built once, so that a page of a 100,000-row run is a few array operations.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from judgelab.calibration import (
    Calibrator,
    LabelledRow,
    MetricsFile,
    ScoreRecord,
    corrections_beside,
    load_calibrator,
    read_metrics,
    read_scores,
    resolve_set,
)
from judgelab.errors import DataError, JudgelabError

__all__ = ["Columns", "ViewRun", "load_view_run"]

log = logging.getLogger(__name__)

#: The threshold of a run without metrics.json (as ``judgelab compare`` and ``gate`` use).
UNCALIBRATED_THRESHOLD = 0.5


@dataclass(frozen=True)
class Columns:
    """The table's columns as arrays, one entry per record (the record's index in ``ViewRun.records``).

    ``score`` is the raw score (nan for a failed row), ``calibrated`` the run's calibrator applied to it
    (equal to ``score`` when the run ships none), ``passed`` the verdict at the task's shipped threshold.
    ``disagreement`` is the default sort (descending): rows whose verdict differs from the label first, the
    farthest past the threshold on the calibrated scale first (confident and wrong), then the right rows,
    the closest calls first (``1 + margin`` for a wrong row, ``-margin`` for a right one; nan for a failed row).
    """

    task: npt.NDArray[np.object_]
    label: npt.NDArray[np.int8]
    score: npt.NDArray[np.float64]
    calibrated: npt.NDArray[np.float64]
    passed: npt.NDArray[np.bool_]
    disagreement: npt.NDArray[np.float64]
    group: npt.NDArray[np.object_]
    split: npt.NDArray[np.object_]
    ids: npt.NDArray[np.object_]


@dataclass
class ViewRun:
    """One run folder (or scores file), read.

    Attributes
    ----------
    name
        How the pages name it (the folder's name).
    path
        The folder holding scores.jsonl.
    records
        The latest record of each row id, in file order.
    metrics
        The run's metrics.json, or ``None`` when it has none.
    thresholds
        ``{task: shipped threshold}`` (0.5 for a task without one).
    calibrated_thresholds
        ``{task: threshold on calibrated scores}``, where the run ships a calibrator.
    rows
        ``{id: LabelledRow}`` of the set, when it could be read (else empty: ``set_problem`` says why).
    set_name
        The set as the run names it (or as ``--set`` gave it).
    corrections
        Where label corrections of this set are appended.
    """

    name: str
    path: Path
    records: list[ScoreRecord]
    metrics: MetricsFile | None
    thresholds: dict[str, float]
    calibrated_thresholds: dict[str, float] = field(default_factory=dict)
    rows: dict[str, LabelledRow] = field(default_factory=dict)
    set_name: str | None = None
    set_problem: str | None = None
    corrections: Path | None = None
    columns: Columns | None = None
    index: dict[str, int] = field(default_factory=dict)
    _choices: dict[str, list[str]] = field(default_factory=dict, repr=False)

    @property
    def tasks(self) -> list[str]:
        """The run's tasks, sorted (the thresholds' keys: one per task of the records)."""
        return sorted(self.thresholds)

    @property
    def n_failed(self) -> int:
        """Records without a score (the evaluator raised for the row)."""
        return 0 if self.columns is None else int(np.isnan(self.columns.score).sum())

    def choices(self, column: str) -> list[str]:
        """The distinct non-empty values of ``task``, ``group`` or ``split`` (the filters' options), computed once."""
        if column not in self._choices:
            assert self.columns is not None
            self._choices[column] = sorted({str(v) for v in getattr(self.columns, column)} - {""})
        return self._choices[column]

    @property
    def report_html(self) -> Path | None:
        path = self.path / "report.html"
        return path if path.is_file() else None

    def record(self, row_id: str) -> ScoreRecord:
        """The record of ``row_id``; a ``DataError`` when the run has none."""
        if row_id not in self.index:
            raise DataError(f"Run {self.name} has no row {row_id!r}.")
        return self.records[self.index[row_id]]


def _scores_file(run: str | Path) -> Path:
    path = Path(run)
    scores = path / "scores.jsonl" if path.is_dir() else path
    if not scores.is_file():
        raise DataError(f"No scores.jsonl at {run}: pass a calibrate (or stress, cascade) output folder or a "
                        "scores.jsonl file.", path=str(scores))
    return scores


def _latest(records: list[ScoreRecord]) -> list[ScoreRecord]:
    latest: dict[str, ScoreRecord] = {}
    for r in records:
        latest.pop(r.id, None)  # a rescored row moves to where its newest record is
        latest[r.id] = r
    return list(latest.values())


def _thresholds(metrics: MetricsFile | None, tasks: list[str], folder: Path) -> tuple[dict[str, float], dict[str, float], dict[str, Calibrator]]:
    """Per task: the shipped threshold, the threshold on calibrated scores and the fitted calibrator."""
    shipped: dict[str, float] = {}
    on_calibrated: dict[str, float] = {}
    calibrators: dict[str, Calibrator] = {}
    for t in tasks:
        tm = metrics.tasks.get(t) if metrics is not None else None
        value = tm.threshold.value if tm is not None else float("nan")
        shipped[t] = UNCALIBRATED_THRESHOLD if math.isnan(value) else value
        if tm is not None and tm.calibrator_file and (folder / tm.calibrator_file).is_file():
            calibrators[t] = load_calibrator(folder / tm.calibrator_file)
            if tm.threshold.calibrated_value is not None:
                on_calibrated[t] = float(tm.threshold.calibrated_value)
    return shipped, on_calibrated, calibrators


def _read_set(spec: str | None, folder: Path) -> tuple[dict[str, LabelledRow], str | None]:
    """The set's rows by id, or why they could not be read (documents and claims are then not shown)."""
    if spec is None:
        return {}, "the run does not name its set; pass --set"
    candidates = [spec]
    if ":" not in spec and not Path(spec).is_absolute():
        candidates.append(str(folder / spec))
    problem = ""
    for cand in candidates:
        try:
            rows, _, _ = resolve_set(cand, skip_invalid=True)
            return {r.id: r for r in rows}, None
        except JudgelabError as exc:
            problem = str(exc)
    return {}, f"the set {spec!r} could not be read ({problem}); pass --set"


def _columns(run: ViewRun, calibrators: dict[str, Calibrator]) -> Columns:
    recs = run.records
    n = len(recs)
    task = np.array([r.task for r in recs], dtype=object)
    score = np.array([r.score if r.ok else np.nan for r in recs], dtype=float)
    calibrated = score.copy()
    passed = np.zeros(n, dtype=bool)
    cut = np.zeros(n, dtype=float)  # the threshold on the calibrated scale
    for t in run.tasks:
        mask = task == t
        cal = calibrators.get(t)
        cut[mask] = run.thresholds[t]
        if cal is not None:
            ok = mask & ~np.isnan(score)
            calibrated[ok] = np.asarray(cal.predict(score[ok]), dtype=float)
            cut[mask] = run.calibrated_thresholds.get(t, float(np.asarray(cal.predict(np.array([run.thresholds[t]])))[0]))
        passed[mask] = score[mask] >= run.thresholds[t]
    label = np.array([r.label for r in recs], dtype=np.int8)
    margin = np.abs(calibrated - cut)
    wrong = passed != (label == 1)
    return Columns(
        task=task, label=label, score=score, calibrated=calibrated, passed=passed,
        disagreement=np.where(np.isnan(score), np.nan, np.where(wrong, 1.0 + margin, -margin)),
        group=np.array([r.group or "" for r in recs], dtype=object),
        split=np.array([r.split or "" for r in recs], dtype=object),
        ids=np.array([r.id for r in recs], dtype=object),
    )


def load_view_run(run: str | Path, *, set_spec: str | None = None, corrections: str | Path | None = None) -> ViewRun:
    """Read a run folder (or scores.jsonl) for the viewer.

    Parameters
    ----------
    run
        A calibrate output folder, or a scores.jsonl file (thresholded at 0.5 without metrics.json);
        a stress run's ``stress/`` folder is read with its ``rows.jsonl`` and the thresholds of the run above it.
    set_spec
        The labelled set (a path or ``KIND:PATH``); default: the set metrics.json names.
    corrections
        Where label corrections go; default ``corrections.jsonl`` beside the set.

    Raises
    ------
    DataError
        When the run has no scores file, or a run file is malformed.
    """
    scores = _scores_file(run)
    folder = scores.parent
    records = _latest(read_scores(scores))
    if not records:
        raise DataError(f"{scores} holds no records; score a set first (judgelab calibrate).", path=str(scores))
    # a stress run's stress/ folder: its perturbed rows beside the scores, the thresholds of the run above it
    rows_beside = folder / "rows.jsonl"
    home = folder.parent if rows_beside.is_file() and not (folder / "metrics.json").is_file() else folder
    metrics = read_metrics(home / "metrics.json") if (home / "metrics.json").is_file() else None
    tasks = sorted({r.task for r in records})
    shipped, on_calibrated, calibrators = _thresholds(metrics, tasks, home)
    set_name = set_spec or (str(rows_beside) if home != folder else None) or (metrics.meta.set if metrics else None)
    rows, problem = _read_set(set_name, folder)
    if problem:
        log.warning("%s: %s", folder, problem)
    where = Path(corrections) if corrections else (corrections_beside(set_name) if set_name else folder / "corrections.jsonl")
    view = ViewRun(name=folder.name or str(folder), path=folder, records=records, metrics=metrics, thresholds=shipped,
                   calibrated_thresholds=on_calibrated, rows=rows, set_name=set_name, set_problem=problem,
                   corrections=where)
    view.index = {r.id: i for i, r in enumerate(records)}
    view.columns = _columns(view, calibrators)
    return view
