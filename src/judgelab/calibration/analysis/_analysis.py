"""Analysis of a scored run: held-out metrics, threshold, abstain band, calibration, bias.

Everything here works from saved ``ScoreRecord``s, without the model.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgelab.calibration.analysis._analysis_record import analysis_record
from judgelab.calibration.analysis._agreement import (
    AGREEMENT_ROWS,
    Agreement,
    LengthBias,
    agreement,
    records_length_bias,
)
from judgelab.calibration.analysis._bootstrap import Interval, bootstrap_many, shared_units
from judgelab.calibration.analysis._calibrator_choice import CalibratorChoice, check_calibrator_name, choose_calibrator
from judgelab.calibration.analysis._calibrators import CALIBRATORS, Calibrator, make_calibrator
from judgelab.calibration.analysis._criteria_thresholds import criteria_thresholds
from judgelab.calibration.analysis._honesty import RunCompleteness, interval_warning
from judgelab.calibration.analysis._metrics import (
    THRESHOLD_METRICS,
    DegenerateMetricWarning,
    binary_metrics,
    fast_binary_metrics,
)
from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.data import TaskMetrics
from judgelab.calibration.analysis._selfpref import SelfPreference, self_preference
from judgelab.calibration.analysis._splits import SplitPlan, split_plan, unit_folds
from judgelab.calibration.analysis._thresholds import (
    AbstainBand,
    abstain_band,
    choose_threshold,
    parse_strategy,
)
from judgelab.errors import DataError

__all__ = ["Analysis", "analyze"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Analysis:
    """What ``analyze`` found for one task's records (``metrics()``: the typed part ``metrics.json`` keeps)."""

    task: str
    n_rows: int
    n_scored: int
    n_errors: int
    strategy: str
    mode: str  # "split" | "cv" | "in-sample"
    mode_note: str
    threshold: float
    threshold_calibrated: float | None
    n_tuning: int
    n_heldout: int
    heldout: dict[str, Interval]
    heldout_by_group: dict[str, dict[str, Interval]]
    in_sample: dict[str, float]
    abstain: AbstainBand
    abstain_heldout: AbstainBand
    calibration: dict[str, dict[str, float]]
    calibrator_kind: str
    calibrator: Calibrator | None
    self_pref: SelfPreference | None
    criteria: dict[str, dict[str, Any]] = field(default_factory=dict)
    calibrator_choice: CalibratorChoice | None = None
    """Which calibrator was shipped and why (``calibrator_kind`` is ``"raw"`` when none is)."""
    # arrays for plots (held-out rows): labels, the records' scores (raw scores in a calibrate run,
    # whose evaluators have no calibrator) and those scores after this analysis's calibrator
    y: np.ndarray = field(default_factory=lambda: np.empty(0))
    s: np.ndarray = field(default_factory=lambda: np.empty(0))
    s_cal: np.ndarray = field(default_factory=lambda: np.empty(0))
    s_tuning: np.ndarray = field(default_factory=lambda: np.empty(0))
    y_tuning: np.ndarray = field(default_factory=lambda: np.empty(0))
    notes: list[str] = field(default_factory=list)
    """Warnings about the data (one class only, rows without evidence, ...), shown in the report."""
    undefined_metrics: list[str] = field(default_factory=list)
    """Why a metric was nan on some tuning or held-out rows (``DegenerateMetricWarning`` messages)."""
    agreement: Agreement | None = None
    """Cohen's kappa, TPR and TNR at the shipped threshold on the held-out rows, with intervals."""
    length_bias: LengthBias | None = None
    """Spearman's rho of score and judged-text length per label (None: the records carry no length)."""

    @property
    def single_class(self) -> int | None:
        """The label when every scored row has the same one, else ``None``."""
        labels = set(np.unique(self.y_tuning).tolist()) | set(np.unique(self.y).tolist())
        return int(next(iter(labels))) if len(labels) == 1 else None

    def warnings(self) -> list[str]:
        """Every warning the report states: the data notes, then the chance note."""
        chance = self.chance_note()
        return [*self.notes, *([chance] if chance else [])]

    def headline(self) -> str:
        """The one sentence a user wants first ("Partial run, on N of M rows: ..." when rows failed)."""
        scope = RunCompleteness(self.n_rows, self.n_scored).scope
        return f"Partial run, {scope}: {self._headline()}" if scope else self._headline()

    def _headline(self) -> str:
        if self.single_class is not None:
            return (
                f"No threshold to ship: every scored row has label {self.single_class}, so no threshold "
                f"can be chosen from evidence (the {self.threshold:.3f} below is not one); "
                f"add rows of label {1 - self.single_class}."
            )
        ba = self.heldout.get("balanced_accuracy")
        where = {
            "split": f"on {self.n_heldout} held-out test rows (tuned on {self.n_tuning} dev rows)",
            "cv": f"on held-out folds ({self.n_heldout} rows, {self.mode_note})",
            "in-sample": f"on the {self.n_heldout} rows it was tuned on (IN-SAMPLE: {self.mode_note})",
        }[self.mode]
        cal = self.calibration.get(self.calibrator_kind, {})
        ece = cal.get("ece_after")
        ece_txt = (
            f"calibrated ECE {ece:.3f} ({self.calibrator_kind}, held-out; raw {cal.get('ece_before', math.nan):.3f})"
            if ece is not None and not math.isnan(ece)
            else "calibrated ECE: n/a"
        )
        if self.calibrator_kind == "raw":
            raw = next((c["ece_before"] for c in self.calibration.values() if not math.isnan(c["ece_before"])), math.nan)
            ece_txt = f"no calibrator shipped, raw ECE {raw:.3f} (held-out)"

        if self.self_pref is not None and self.self_pref.measurable:
            sp = f"self-preference gap {self.self_pref.gap_pos:+.3f} (p = {self.self_pref.p_value_pos:.3g})"
        else:
            sp = "self-preference gap: not measurable on this set"
        return (
            f"Ship threshold {self.threshold:.3f}: expected balanced accuracy {ba} {where}; "
            f"{ece_txt}; {sp}."
        )

    def chance_note(self) -> str | None:
        """A plain warning when AUROC's interval includes 0.5."""
        au = self.heldout.get("auroc")
        if au is None or math.isnan(au.estimate):
            return None
        if not math.isnan(au.low) and au.low <= 0.5 <= au.high:
            return (
                f"AUROC {au} includes 0.5: on this set the judge's scores are not "
                "distinguishable from chance. Do not ship it for this task without a better model."
            )
        return None

    def metrics(self) -> TaskMetrics:
        """What ``metrics.json`` keeps of this analysis: the typed ``TaskMetrics`` of the task."""
        return analysis_record(self)


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


def _fit_calibrator(kind: str, s: np.ndarray, y: np.ndarray) -> Calibrator | None:
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
    final_cal = _fit_calibrator(choice.kind, s_tuning, y_tuning) if choice.kind != "raw" else None
    t = tuning.threshold
    t_cal = float(final_cal.predict(np.array([t]))[0]) if final_cal is not None else None
    gens = [r.generator for r in data.ok]
    sp = self_preference(data.s >= t, data.y, gens, self_generators, n_resamples=max(500, n_resamples),
                         n_permutations=max(500, n_resamples), seed=seed) if any(gens) else None
    ok = data.ok
    crit = criteria_thresholds(ok, strategy=str(st)) if any(r.labels and r.criteria for r in ok) else {}
    held = plan.held
    agree = agreement(data.y[held], data.s[held], threshold=tuning.thr_row[held], units=data.units[held],
                      rows=AGREEMENT_ROWS[plan.mode], n_resamples=n_resamples, seed=seed)
    return Analysis(
        task=data.task, n_rows=len(records), n_scored=len(ok), n_errors=len(records) - len(ok),
        strategy=str(st), mode=plan.mode, mode_note=plan.note, threshold=float(t), threshold_calibrated=t_cal,
        n_tuning=int(plan.tune.sum()), n_heldout=int(held.sum()), heldout=heldout, heldout_by_group=by_group,
        in_sample=in_sample, abstain=tuning.band, abstain_heldout=band_held, calibration=calibration,
        calibrator_kind=choice.kind, calibrator=final_cal, self_pref=sp, criteria=crit, calibrator_choice=choice,
        y=data.y[held], s=data.s[held], s_cal=tuning.s_cal_row.get(choice.kind, data.s)[held], s_tuning=s_tuning,
        y_tuning=y_tuning, notes=_data_notes(data, heldout, held), undefined_metrics=undefined, agreement=agree,
        length_bias=records_length_bias(ok, units=data.units, n_resamples=n_resamples, seed=seed),
    )


@dataclass(frozen=True)
class _Scored:
    """One task's successfully scored records as arrays."""

    task: str
    ok: list[ScoreRecord]
    y: np.ndarray
    s: np.ndarray
    groups: np.ndarray  # the reporting category (``ScoreRecord.group``): metrics per group
    splits: np.ndarray
    units: np.ndarray  # the resampling unit (``ScoreRecord.unit``): folds and bootstraps


def _scored(records: Sequence[ScoreRecord]) -> _Scored:
    tasks = {r.task for r in records}
    if len(tasks) > 1:
        raise DataError(f"analyze takes one task's records; got {sorted(tasks)}. Analyse each task separately.")
    ok = [r for r in records if r.ok]
    if not ok:
        raise DataError("No row was scored successfully; nothing to analyse (see the 'error' fields of the run file).")
    return _Scored(
        task=next(iter(tasks)),
        ok=ok,
        y=np.array([r.label for r in ok], dtype=int),
        s=np.array([r.score for r in ok], dtype=float),
        groups=np.array([r.group or "(none)" for r in ok]),
        splits=np.array([r.split or "" for r in ok]),
        units=np.array([r.unit for r in ok]),
    )


def _data_notes(data: _Scored, heldout: dict[str, Interval], held: np.ndarray) -> list[str]:
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
    thr_row: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    s_cal_row: dict[str, np.ndarray]


def _tune(data: _Scored, plan: SplitPlan, st: Any, target_error: float) -> _Tuning:
    """Tune threshold, abstain band and calibrators on each plan's tuning rows; apply them to its held-out rows."""
    n = len(data.ok)
    tuning = _Tuning(math.nan, AbstainBand(math.nan, math.nan, math.nan, math.nan, target_error),
                     np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan),
                     {k: np.full(n, np.nan) for k in CALIBRATORS})

    def tune_and_apply(train: np.ndarray, target: np.ndarray) -> tuple[float, AbstainBand]:
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
    data: _Scored, plan: SplitPlan, tuning: _Tuning, target_error: float, n_resamples: int, seed: int | None,
    undefined: list[str],
) -> tuple[dict[str, Interval], dict[str, dict[str, Interval]], dict[str, float], AbstainBand]:
    """Metrics on the held-out rows with bootstrap intervals, by group, in-sample, and the pooled band."""
    held = plan.held
    y_h, s_h, t_h = data.y[held], data.s[held], tuning.thr_row[held]

    def stat(y: np.ndarray, s: np.ndarray, t: np.ndarray) -> dict[str, float]:
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


def _calibration_table(data: _Scored, plan: SplitPlan, tuning: _Tuning) -> dict[str, dict[str, float]]:
    """ECE and Brier before and after each calibrator, on the held-out rows."""
    held = plan.held
    y_h, s_h = data.y[held], data.s[held]
    calibration = {}
    for kind in CALIBRATORS:
        sc = tuning.s_cal_row[kind][held]
        valid = ~np.isnan(sc)
        before = fast_binary_metrics(y_h[valid], s_h[valid], 0.5) if valid.any() else {}
        after = fast_binary_metrics(y_h[valid], sc[valid], 0.5) if valid.any() else {}
        calibration[kind] = {
            "n": int(valid.sum()),
            "ece_before": before.get("ece", math.nan),
            "ece_after": after.get("ece", math.nan),
            "ece_equal_mass_before": before.get("ece_equal_mass", math.nan),
            "ece_equal_mass_after": after.get("ece_equal_mass", math.nan),
            "brier_before": before.get("brier", math.nan),
            "brier_after": after.get("brier", math.nan),
        }
    return calibration


def _pooled_band(y: np.ndarray, s: np.ndarray, low: np.ndarray, high: np.ndarray, target_error: float) -> AbstainBand:
    decided = (s < low) | (s >= high)
    wrong = ((s >= high) & (y == 0)) | ((s < low) & (y == 1))
    n_dec = int(decided.sum())
    lo = float(np.nanmedian(low)) if len(low) else math.nan
    hi = float(np.nanmedian(high)) if len(high) else math.nan
    return AbstainBand(lo, hi, n_dec / max(len(y), 1), float(wrong.sum() / n_dec) if n_dec else math.nan, target_error)
