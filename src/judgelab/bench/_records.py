"""The bench's typed records, one shape from the computation to ``leaderboard.json`` to the tables.

Intervals are the run files' ``IntervalRecord`` (estimate, low, high; nan written as ``null``).
``LEADERBOARD_VERSION`` changes whenever a field is added, renamed or changes meaning, so that a
reader can refuse a file it does not know with a clear message.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judgelab.calibration.data import IntervalRecord

__all__ = ["LEADERBOARD_VERSION", "MEAN_COLUMN", "BaselineComparison", "BaselineEntry", "CellMetrics", "CellOutcome",
           "CellStatus", "JudgeCost", "Kappa", "Leaderboard", "McNemar", "RankEntry", "Ranking", "Stability"]

LEADERBOARD_VERSION = 1

#: The ranking column that averages a judge's figure over every set and task of the bench.
MEAN_COLUMN = "mean over sets"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)


CellStatus = Literal["complete", "partial", "failed"]


class CellOutcome(_Record):
    """What scoring one cell gave: how many rows have a score, and the first error when some have none."""

    judge: str
    set: str
    status: CellStatus
    n_rows: int
    n_scored: int
    scored_now: int = 0
    error: str | None = None


class JudgeCost(_Record):
    """What one judge cost on this machine: kept in ``cells/<judge>/cost.json`` and updated when it scores.

    ``judgments_per_second`` is the rows this bench scored divided by the time their scoring took
    (the records' ``seconds``, summed, so resumed runs add up); ``wall_seconds`` is the wall time the
    judge was held (loading included) in the bench run that last scored with it; ``peak_rss_mib`` the
    largest resident memory above the process's before loading (in-process judges); ``latency_*``
    single-judgment wall times (served judges, ``LATENCY_PROBE_ROWS`` rows timed one by one).
    """

    judge: str
    remote: bool
    judgments: int = 0
    scoring_seconds: float = 0.0
    judgments_per_second: float | None = None
    seconds_per_judgment: float | None = None
    wall_seconds: float | None = None
    load_seconds: float | None = None
    peak_rss_mib: float | None = None
    latency_p50_seconds: float | None = None
    latency_p95_seconds: float | None = None


class CellMetrics(_Record):
    """One judge on one task of one set, measured on the set's test split.

    ``threshold`` is tuned on the dev split (balanced accuracy; ``threshold_note`` says when 0.5 was
    used instead); ``balanced_accuracy`` is measured at it on the test split, ``balanced_accuracy_at_half``
    at 0.5. ``coverage`` is the share of the cell's rows with a score. Cells that are not complete
    carry their figures on the rows they have but are never ranked.
    """

    judge: str
    set: str
    task: str
    column: str
    status: CellStatus
    n_rows: int
    n_scored: int
    coverage: float
    n_dev: int
    n_test: int
    n_test_units: int
    threshold: float | None = None
    threshold_note: str | None = None
    auroc: IntervalRecord | None = None
    balanced_accuracy: IntervalRecord | None = None
    balanced_accuracy_at_half: float | None = None
    ece: float | None = None
    seconds_per_judgment: float | None = None
    prompt_tokens_per_judgment: float | None = None
    warnings: tuple[str, ...] = ()
    error: str | None = None


class McNemar(_Record):
    """McNemar's test of a judge against the best one at their tuned thresholds, on the test rows."""

    only_best_correct: int
    only_judge_correct: int
    p_value: float


class RankEntry(_Record):
    """A judge's place in one ranking: its figure and its paired difference from the best judge."""

    judge: str
    value: float | None
    difference: IntervalRecord
    best: bool = False
    tied_with_best: bool = False
    mcnemar: McNemar | None = None


class Ranking(_Record):
    """The judges of one column (a set and task, or ``MEAN_COLUMN``) ranked by ``metric``, best first."""

    column: str
    metric: str
    n_test: int
    n_units: int
    entries: tuple[RankEntry, ...]
    not_ranked: dict[str, str] = Field(default_factory=dict)


class BaselineEntry(_Record):
    """A judge's paired difference from the bench's baseline judge in one column (judge minus baseline).

    ``worse`` when the interval lies wholly below 0, ``better`` when it lies wholly above 0.
    """

    judge: str
    difference: IntervalRecord
    worse: bool
    better: bool


class BaselineComparison(_Record):
    """Every judge against the baseline in one column (a set and task, or ``MEAN_COLUMN``)."""

    column: str
    baseline: str
    metric: str
    entries: tuple[BaselineEntry, ...]


class Kappa(_Record):
    """Cohen's kappa between two judges' verdicts at their tuned thresholds, on one column's test rows."""

    judge_a: str
    judge_b: str
    column: str
    n: int
    kappa: float | None


class Stability(_Record):
    """Run-to-run stability of a judge: ``repeats`` rescorings of ``n_rows`` rows of one column.

    ``flip_rate`` is the share of (row, repeat) pairs whose verdict at the judge's threshold differs from
    the first scoring; ``max_score_change`` the largest absolute change of a row's score.
    """

    judge: str
    column: str
    n_rows: int
    repeats: int
    flip_rate: float | None
    max_score_change: float | None
    n_failed: int = 0


class Leaderboard(_Record):
    """``leaderboard.json``: every figure of a bench and what it was measured on."""

    version: int = LEADERBOARD_VERSION
    created: str
    command: str
    machine: dict[str, str]
    settings: dict[str, object]
    judges: tuple[str, ...]
    sets: dict[str, str]
    metric: Literal["auroc", "balanced_accuracy"]
    complete: bool
    costs: tuple[JudgeCost, ...]
    cells: tuple[CellMetrics, ...]
    rankings: tuple[Ranking, ...]
    kappa: tuple[Kappa, ...] = ()
    stability: tuple[Stability, ...] = ()
    missing: tuple[CellOutcome, ...] = ()
    baseline: str | None = None
    versus_baseline: tuple[BaselineComparison, ...] = ()
    admitted: dict[str, bool] = Field(default_factory=dict)
    """With a baseline: whether each other judge is worse than it beyond the interval in no column and better on the
    mean over sets (its point estimate above 0): the rule a candidate adapter must pass to replace the shipped one."""
