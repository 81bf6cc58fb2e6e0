"""Analysis of a scored run: held-out metrics, threshold, abstain band, calibration, bias.

Everything here works from saved ``ScoreRecord``s, without the model.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis._bootstrap import Interval, bootstrap_many, shared_units
from judgelab.calibration.analysis._calibrator_choice import check_calibrator_name, choose_calibrator
from judgelab.calibration.analysis._calibrators import CALIBRATORS, Calibrator, make_calibrator
from judgelab.calibration.analysis._headline import chance_note, headline
from judgelab.calibration.analysis._honesty import interval_warning
from judgelab.calibration.analysis._measures import MEASURES, MeasureInputs, Scored
from judgelab.calibration.analysis._metrics import THRESHOLD_METRICS, DegenerateMetricWarning, binary_metrics, fast_binary_metrics
from judgelab.calibration.analysis._splits import SplitPlan, split_plan, unit_folds
from judgelab.calibration.analysis._thresholds import AbstainBand, ThresholdStrategy, abstain_band, choose_threshold, parse_strategy
from judgelab.calibration.data import AbstainBands, CalibrationRecord, CalibratorRecord, RowCounts, ScoreRecord, TaskMetrics, TaskThreshold
from judgelab.errors import DataError

__all__ = ["Analysis", "PlotArrays", "analyze", "stated_warnings"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlotArrays:
    """The rows the report's figures are drawn from (kept apart from the figures; not in ``metrics.json``).

    Held-out rows: labels ``y``, the records' scores ``s`` (raw scores in a
    calibrate run, whose evaluators have no calibrator) and those scores
    after the analysis's calibrator ``s_cal``; the tuning rows' scores and
    labels ``s_tuning`` and ``y_tuning``.
    """

    y: npt.NDArray[np.int_]
    s: npt.NDArray[np.float64]
    s_cal: npt.NDArray[np.float64]
    s_tuning: npt.NDArray[np.float64]
    y_tuning: npt.NDArray[np.int_]


@dataclass(frozen=True)
class Analysis:
    """What ``analyze`` found for one task's records.

    ``metrics`` is every figure, under the names ``metrics.json`` gives them
    (the report renders it; ``gate``, ``compare``, ``estimate``, ``cascade``
    and ``jury`` read the same model back with ``read_metrics``). Beside it,
    what the file does not keep: the arrays the plots need, the fitted
    calibrator (saved as ``calibrator-TASK.json``) and why a metric was
    undefined on some rows.
    """

    metrics: TaskMetrics
    plots: PlotArrays
    calibrator: Calibrator | None = None
    undefined_metrics: tuple[str, ...] = ()
    """Why a metric was nan on some tuning or held-out rows (``DegenerateMetricWarning`` messages)."""

    @property
    def task(self) -> str:
        """The task analysed."""
        return self.metrics.task or ""

    def headline(self) -> str:
        """The one sentence a user wants first (``metrics.headline``)."""
        return self.metrics.headline or ""

    def warnings(self) -> list[str]:
        """Every warning the report states: the data notes, then the chance note."""
        return stated_warnings(self.metrics)

    def with_warnings(self, notes: Sequence[str]) -> Analysis:
        """This analysis with ``notes`` (warnings about the data) added after its own."""
        if not notes:
            return self
        added = [*(self.metrics.warnings or []), *notes]
        return replace(self, metrics=self.metrics.model_copy(update={"warnings": added}))


def stated_warnings(m: TaskMetrics) -> list[str]:
    """A task's warnings as the report states them: its data notes, then its chance note."""
    return [*(m.warnings or []), *([m.chance_note] if m.chance_note else [])]


@contextmanager
def _expected_degenerate(sink: list[str]) -> Iterator[None]:
    """Collect the ``DegenerateMetricWarning``s of a step where small or one-class data is expected.

    Their messages go to ``sink`` (the report lists them) instead of the
    console; any other warning is passed on as it was raised.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateMetricWarning)
        yield
    for w in caught:
        if issubclass(w.category, DegenerateMetricWarning):
            if str(w.message) not in sink:
                sink.append(str(w.message))
                logger.info("undefined metric: %s", w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _fit_calibrator(kind: str, s: npt.NDArray[np.float64], y: npt.NDArray[np.int_]) -> Calibrator | None:
    try:
        return make_calibrator(kind).fit(s, y)
    except Exception as exc:  # e.g. one class only
        logger.warning("could not fit %s calibrator: %s", kind, exc)
        return None


def analyze(
    records: Iterable[ScoreRecord],
    *,
    strategy: str = "balanced_accuracy",
    calibrator: str = "auto",
    self_generators: Sequence[str] = (),
    k_folds: int = 5,
    target_error: float = 0.1,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Analysis:
    """Analyse one task's scored records.

    The threshold, abstain band and calibrators are tuned on the ``dev``
    split and measured on ``test`` when the records carry both; otherwise
    k-fold cross-validation gives held-out estimates and the shipped
    threshold is tuned on all rows. Records of one unit (``ScoreRecord.unit``,
    e.g. the two answers to one HaluEval question) stay in one fold. With
    too few rows (or units) for either, metrics are in-sample and marked so.
    What is measured at the tuned threshold (agreement, length bias,
    self-preference, criteria minimums) is computed by the entries of
    ``MEASURES``, one field of ``TaskMetrics`` each.

    Parameters
    ----------
    records
        Records of one task (``ScoreRecord``); rows that failed to score are
        counted and left out.
    strategy
        Threshold strategy (see ``parse_strategy``).
    calibrator
        ``auto`` (the default: the lowest cross-validated ECE on the tuning
        rows, ties to the simpler), ``raw`` (none), ``temperature``,
        ``platt`` or ``isotonic``. All three calibrators are measured; one
        that makes the held-out ECE worse than raw is not shipped (see
        ``_calibrator_choice``).
    self_generators
        fnmatch patterns naming the judge's own family, for self-preference.
    k_folds
        Folds for cross-validation when there is no dev/test split.
    target_error
        Error rate among decided rows for the abstain band.
    n_resamples, seed
        Bootstrap settings.

    Returns
    -------
    Analysis
    """
    st = parse_strategy(strategy)
    check_calibrator_name(calibrator)  # validate the name early
    records = list(records)
    data = _scored(records)
    undefined: list[str] = []
    plan = split_plan(data.y, data.splits, data.units, k_folds, seed)
    with _expected_degenerate(undefined):
        tuning = _tune(data, plan, st, target_error)
    heldout, by_group, in_sample, band_held = _heldout_metrics(data, plan, tuning, target_error, n_resamples, seed, undefined)
    calibration = _calibration_table(data, plan, tuning)
    s_tuning, y_tuning = data.s[plan.tune], data.y[plan.tune]
    choice = choose_calibrator(calibrator, s_tuning, y_tuning,
                               unit_folds(y_tuning, data.units[plan.tune], k_folds, seed), calibration)
    final_cal = _fit_calibrator(choice.shipped, s_tuning, y_tuning) if choice.shipped != "raw" else None
    t, held = tuning.threshold, plan.held
    inputs = MeasureInputs(data, plan, t, tuning.thr_row, st, self_generators, n_resamples, seed)
    notes = _data_notes(data, heldout, held)
    # the warnings are set (so written) only when there are some; the measures as MEASURES declares them
    m = TaskMetrics(
        task=data.task, headline="", chance_note=None,
        rows=RowCounts(total=len(records), scored=len(data.ok), errors=len(records) - len(data.ok)),
        threshold=TaskThreshold(value=float(t), strategy=str(st), mode=plan.mode, note=plan.note,
                                calibrated_value=float(final_cal.predict(np.array([t]))[0]) if final_cal is not None else None,
                                n_tuning=int(plan.tune.sum()), n_heldout=int(held.sum())),
        heldout=heldout, heldout_by_group=by_group, in_sample_at_threshold=dict(in_sample),
        abstain_band=AbstainBands(tuned=tuning.band, heldout=band_held), calibration=calibration,
        calibrator=CalibratorRecord.model_validate(final_cal.to_dict()) if final_cal is not None else None,
        calibrator_choice=choice, **({"warnings": notes} if notes else {}), **_measured(inputs),
    )
    m = m.model_copy(update={"chance_note": chance_note(m.heldout or {})})
    m = m.model_copy(update={"headline": headline(m, _single_class(y_tuning, data.y[held]))})
    plots = PlotArrays(y=data.y[held], s=data.s[held], s_cal=tuning.s_cal_row.get(choice.shipped, data.s)[held],
                       s_tuning=s_tuning, y_tuning=y_tuning)
    return Analysis(m, plots, final_cal, tuple(undefined))


def _measured(inputs: MeasureInputs) -> dict[str, Any]:
    """Each computed measure's field (``MEASURES``), left out when it has none and is written only when it has."""
    out: dict[str, Any] = {}
    for measure in MEASURES:
        if measure.compute is not None:
            value = measure.compute(inputs)
            if value is not None or measure.written_when_none:
                out[measure.field] = value
    return out


def _single_class(*labels: npt.NDArray[np.int_]) -> int | None:
    """The label when every scored row has the same one, else ``None``."""
    seen = set().union(*(np.unique(y).tolist() for y in labels))
    return int(next(iter(seen))) if len(seen) == 1 else None


def _scored(records: Sequence[ScoreRecord]) -> Scored:
    tasks = {r.task for r in records}
    if len(tasks) > 1:
        raise DataError(f"analyze takes one task's records; got {sorted(tasks)}. Analyse each task separately.")
    ok = [r for r in records if r.ok]
    if not ok:
        raise DataError("No row was scored successfully; nothing to analyse (see the 'error' fields of the run file).")
    return Scored(
        task=next(iter(tasks)),
        ok=ok,
        y=np.array([r.label for r in ok], dtype=int),
        s=np.array([r.score for r in ok], dtype=float),
        groups=np.array([r.group or "(none)" for r in ok]),
        splits=np.array([r.split or "" for r in ok]),
        units=np.array([r.unit for r in ok]),
    )


def _data_notes(data: Scored, heldout: dict[str, Interval], held: npt.NDArray[np.bool_]) -> list[str]:
    notes = [w for w in [interval_warning(data.units[held], heldout, what="held-out intervals")] if w]
    if set(np.unique(data.s)) <= {0.0, 1.0}:
        notes.append(
            "Every score is exactly 0 or 1: the judge gave verdicts, not probabilities (e.g. a remote judge in "
            "text mode, docs/remote.md). The threshold, calibration, AUROC, AUPRC, Brier score and ECE need "
            "probabilities and mean nothing here; read accuracy, balanced accuracy, F1 and MCC."
        )
    if len(np.unique(data.y)) != 1:
        return notes
    only = int(data.y[0])
    return notes + [
        f"Only label {only} rows were scored ({len(data.ok)} rows): AUROC, balanced accuracy, the threshold "
        f"and calibration need both labels and are not measured. Add rows of label {1 - only} to the set."
    ]


@dataclass(frozen=True)
class _Tuning:
    """The shipped threshold and band, and per row the threshold, band and calibrated scores it is measured with."""

    threshold: float
    band: AbstainBand
    thr_row: npt.NDArray[np.float64]
    band_low: npt.NDArray[np.float64]
    band_high: npt.NDArray[np.float64]
    s_cal_row: dict[str, npt.NDArray[np.float64]]


def _tune(data: Scored, plan: SplitPlan, st: ThresholdStrategy, target_error: float) -> _Tuning:
    """Tune threshold, abstain band and calibrators on each plan's tuning rows; apply them to its held-out rows."""
    n = len(data.ok)
    unset = AbstainBand(low=math.nan, high=math.nan, coverage=math.nan, error=math.nan, target_error=target_error)
    tuning = _Tuning(math.nan, unset,
                     np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan),
                     {k: np.full(n, np.nan) for k in CALIBRATORS})

    def tune_and_apply(train: npt.NDArray[np.bool_], target: npt.NDArray[np.bool_] | npt.NDArray[np.intp]) -> tuple[float, AbstainBand]:
        threshold = choose_threshold(data.y[train], data.s[train], st)
        b = abstain_band(data.y[train], data.s[train], target_error=target_error)
        tuning.thr_row[target] = threshold
        tuning.band_low[target], tuning.band_high[target] = b.low, b.high
        for kind in CALIBRATORS:
            c = _fit_calibrator(kind, data.s[train], data.y[train])
            if c is not None:
                tuning.s_cal_row[kind][target] = c.predict(data.s[target])
        return threshold, b

    if plan.folds is None:
        t, band = tune_and_apply(plan.tune, plan.held)
    else:
        t = choose_threshold(data.y, data.s, st)
        band = abstain_band(data.y, data.s, target_error=target_error)
        for test_idx in plan.folds:
            train = np.ones(n, dtype=bool)
            train[test_idx] = False
            tune_and_apply(train, test_idx)
    return _Tuning(t, band, tuning.thr_row, tuning.band_low, tuning.band_high, tuning.s_cal_row)


def _heldout_metrics(
    data: Scored, plan: SplitPlan, tuning: _Tuning, target_error: float, n_resamples: int, seed: int | None,
    undefined: list[str],
) -> tuple[dict[str, Interval], dict[str, dict[str, Interval]], dict[str, float], AbstainBand]:
    """Metrics on the held-out rows with bootstrap intervals, by group, in-sample, and the pooled band."""
    held = plan.held
    y_h, s_h, t_h = data.y[held], data.s[held], tuning.thr_row[held]

    def stat(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], t: npt.NDArray[np.float64]) -> dict[str, float]:
        return fast_binary_metrics(y, s, t)

    # Rows of one unit are resampled together; with no unit of several rows
    # this is the plain row bootstrap.
    heldout = bootstrap_many(stat, [y_h, s_h, t_h], n_resamples=n_resamples, seed=seed,
                             units=shared_units(data.units[held]))
    # Point estimates from scikit-learn (the numpy twin used for resamples
    # gives the same values; the tests check it). Under cross-validation each
    # fold has its own threshold, so the thresholded metrics come from the twin.
    with _expected_degenerate(undefined):
        point = binary_metrics(y_h, s_h, threshold=tuning.threshold)
        if plan.mode == "cv":
            per_fold = fast_binary_metrics(y_h, s_h, t_h)
            point.update({k: per_fold[k] for k in THRESHOLD_METRICS})
    for k, iv in heldout.items():
        heldout[k] = Interval(float(point[k]), iv.low, iv.high, iv.confidence)
    by_group = {}
    for g in sorted(set(data.groups[held])):
        m = data.groups[held] == g
        by_group[g] = bootstrap_many(stat, [y_h[m], s_h[m], t_h[m]], n_resamples=max(200, n_resamples // 5), seed=seed)
    with _expected_degenerate(undefined):
        in_sample = binary_metrics(data.y, data.s, threshold=tuning.threshold)
    band_held = _pooled_band(y_h, s_h, tuning.band_low[held], tuning.band_high[held], target_error)
    return heldout, by_group, in_sample, band_held


def _calibration_table(data: Scored, plan: SplitPlan, tuning: _Tuning) -> dict[str, CalibrationRecord]:
    """ECE and Brier before and after each calibrator, on the held-out rows."""
    held = plan.held
    y_h, s_h = data.y[held], data.s[held]
    calibration = {}
    for kind in CALIBRATORS:
        sc = tuning.s_cal_row[kind][held]
        valid = ~np.isnan(sc)
        before = fast_binary_metrics(y_h[valid], s_h[valid], 0.5) if valid.any() else {}
        after = fast_binary_metrics(y_h[valid], sc[valid], 0.5) if valid.any() else {}
        calibration[kind] = CalibrationRecord(
            n=int(valid.sum()),
            ece_before=before.get("ece", math.nan),
            ece_after=after.get("ece", math.nan),
            ece_equal_mass_before=before.get("ece_equal_mass", math.nan),
            ece_equal_mass_after=after.get("ece_equal_mass", math.nan),
            brier_before=before.get("brier", math.nan),
            brier_after=after.get("brier", math.nan),
        )
    return calibration


def _pooled_band(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], low: npt.NDArray[np.float64], high: npt.NDArray[np.float64],
                 target_error: float) -> AbstainBand:
    decided = (s < low) | (s >= high)
    wrong = ((s >= high) & (y == 0)) | ((s < low) & (y == 1))
    n_dec = int(decided.sum())
    lo = float(np.nanmedian(low)) if len(low) else math.nan
    hi = float(np.nanmedian(high)) if len(high) else math.nan
    return AbstainBand(low=lo, high=hi, coverage=n_dec / max(len(y), 1),
                       error=float(wrong.sum() / n_dec) if n_dec else math.nan, target_error=target_error)
