"""The one list of what a task's ``TaskMetrics`` holds and how the report shows it (``MEASURES``).

Each ``Measure`` names the ``TaskMetrics`` field it fills, the function that
computes the field's record from the task's scored rows, and the tables the
report shows for it. ``analyze`` calls every ``compute`` (a field whose
``compute`` is ``None`` is the core of ``analyze``: the threshold, the held-out
metrics, the band and the calibration, tuned together); the report renders
every measure's ``tables`` in this order, for the fields a run file has.

A new metric is at most four files: its statistic (a module of this package,
returning its record), its record (a field of ``TaskMetrics``,
``data/_task_metrics.py``), its entry here (compute and tables), and its
re-export when it is public.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from judgelab.calibration.analysis._agreement import AGREEMENT_ROWS, agreement, records_length_bias
from judgelab.calibration.analysis._criteria_thresholds import criteria_thresholds
from judgelab.calibration.analysis._selfpref import self_preference
from judgelab.calibration.analysis._splits import SplitPlan
from judgelab.calibration.analysis._thresholds import ThresholdStrategy
from judgelab.calibration.data import ScoreRecord, TaskMetrics

__all__ = ["MEASURES", "Measure", "MeasureInputs", "MetricTable", "Scored"]


@dataclass(frozen=True)
class Scored:
    """One task's successfully scored records as arrays."""

    task: str
    ok: list[ScoreRecord]
    y: npt.NDArray[np.int_]
    s: npt.NDArray[np.float64]
    groups: npt.NDArray[np.str_]  # the reporting category (``ScoreRecord.group``): metrics per group
    splits: npt.NDArray[np.str_]
    units: npt.NDArray[np.str_]  # the resampling unit (``ScoreRecord.unit``): folds and bootstraps


@dataclass(frozen=True)
class MeasureInputs:
    """What a measure is computed from: the scored rows, the split plan, the tuned threshold, the options.

    ``threshold`` is the shipped threshold, ``thresholds`` per row the one it
    is measured with (under cross-validation each fold's own).
    """

    data: Scored
    plan: SplitPlan
    threshold: float
    thresholds: npt.NDArray[np.float64]
    strategy: ThresholdStrategy
    self_generators: Sequence[str]
    n_resamples: int
    seed: int | None


class MetricTable(NamedTuple):
    """One table of the report: its title, header, rows of cell texts and the note under it."""

    title: str
    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    note: str = ""


@dataclass(frozen=True)
class Measure:
    """A ``TaskMetrics`` field, how ``analyze`` computes it, and the report's tables of it.

    ``compute`` returns the field's value (its record); ``None`` from it
    leaves the field unset (not written) when ``written_when_none`` is false,
    else writes ``null``. ``compute`` itself is ``None`` for the fields the
    core of ``analyze`` fills.
    """

    field: str
    compute: Callable[[MeasureInputs], BaseModel | dict[str, object] | None] | None
    tables: Callable[[TaskMetrics], list[MetricTable]]
    written_when_none: bool = True


def _f(x: float | None, spec: str = ".3f") -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return format(x, spec)


def _n(x: float | None) -> str:
    return "n/a" if x is None else f"{x:g}"


# -- the core of analyze: the held-out metrics, by group, the calibration and the band -----------

_SHOWN = ("balanced_accuracy", "accuracy", "precision", "recall", "f1", "mcc", "cohen_kappa",
          "auroc", "auprc", "brier", "log_loss", "ece", "ece_equal_mass")


def _metrics_tables(m: TaskMetrics) -> list[MetricTable]:
    """The held-out metrics at the shipped threshold, beside the in-sample ones."""
    t, heldout, in_sample = m.threshold, m.heldout or {}, m.in_sample_at_threshold or {}
    note = {
        "split": "Measured on the test split; threshold, band and calibrators tuned on the dev split.",
        "cv": f"Held-out estimates from {t.note}.",
        "in-sample": f"IN-SAMPLE ({t.note}): these numbers are measured on the rows the threshold was tuned on and are optimistic.",
    }[t.mode or "in-sample"]
    return [MetricTable(
        "Metrics at the shipped threshold (95% bootstrap intervals)",
        ["metric", "held-out", f"all rows, in-sample (threshold {t.value:.3f})"],
        [[k, format(heldout[k]), _f(in_sample.get(k))] for k in _SHOWN if k in heldout],
        note,
    )]


def _by_group_tables(m: TaskMetrics) -> list[MetricTable]:
    by_group = m.heldout_by_group or {}
    if len(by_group) <= 1:
        return []
    return [MetricTable(
        "By group (held-out)",
        ["group", "balanced accuracy", "AUROC", "F1", "ECE"],
        [[g, format(ivs["balanced_accuracy"]), format(ivs["auroc"]), format(ivs["f1"]), format(ivs["ece"])]
         for g, ivs in by_group.items()],
    )]


def _calibrator_note(m: TaskMetrics) -> str:
    """Which calibrator is shipped and why (``calibrator_choice``)."""
    why = f"Shipped: {m.calibrator_choice.reason}. " if m.calibrator_choice is not None else ""
    kind = m.shipped_calibrator
    if kind == "raw":
        return why + "No calibrator file is written; scores are served as the judge gives them."
    return (why + f"The {kind} calibrator is fitted on the {m.threshold.n_tuning} tuning rows; "
            f"with it, the threshold on calibrated scores is {_f(m.threshold.calibrated_value)}.")


def _calibration_tables(m: TaskMetrics) -> list[MetricTable]:
    if m.calibration is None:
        return []
    kind = m.shipped_calibrator
    return [MetricTable(
        "Calibration (held-out)",
        ["calibrator", "rows", "ECE before", "ECE after", "ECE equal-mass before", "after", "Brier before", "after"],
        [[k + (" (shipped)" if k == kind else ""), str(v.n), _f(v.ece_before), _f(v.ece_after),
          _f(v.ece_equal_mass_before), _f(v.ece_equal_mass_after), _f(v.brier_before), _f(v.brier_after)]
         for k, v in m.calibration.items()],
        _calibrator_note(m),
    )]


def _band_tables(m: TaskMetrics) -> list[MetricTable]:
    if m.abstain_band is None:
        return []
    b, bh = m.abstain_band.tuned, m.abstain_band.heldout
    return [MetricTable(
        f"Abstain band (target error {b.target_error:g} among decided rows)",
        ["", "fail below", "pass at or above", "coverage", "error among decided"],
        [["tuning rows", _f(b.low), _f(b.high), _f(b.coverage), _f(b.error)],
         ["held-out", _f(bh.low), _f(bh.high), _f(bh.coverage), _f(bh.error)]],
        ("No band reaches this error target on the tuning rows: every row would be escalated."
         if b.coverage == 0 else
         "Accept when confident, escalate the rows in between to a person or a stronger judge."),
    )]


# -- the measures computed from the tuned threshold ---------------------------------------------

def _agreement(i: MeasureInputs) -> BaseModel:
    held = i.plan.held
    return agreement(i.data.y[held], i.data.s[held], threshold=i.thresholds[held], units=i.data.units[held],
                     rows=AGREEMENT_ROWS[i.plan.mode], n_resamples=i.n_resamples, seed=i.seed)


def _agreement_tables(m: TaskMetrics) -> list[MetricTable]:
    """Kappa, TPR and TNR with intervals."""
    g = m.agreement
    if g is None:
        return []
    return [MetricTable(
        "Agreement with the labels (95% bootstrap intervals)",
        ["figure", "value", "rows"],
        [["Cohen's kappa", format(g.cohen_kappa), str(g.n)],
         ["TPR: rows labelled 1 that pass", format(g.tpr), str(g.n_label_1)],
         ["TNR: rows labelled 0 that fail", format(g.tnr), str(g.n_label_0)]],
        (f"Verdicts at the shipped threshold ({g.threshold:.3f}"
         + (", each fold's own threshold" if m.threshold.mode == "cv" else "")
         + f") against the labels, on {g.rows} rows; rows of one meta.pair group, if any, are resampled together. "
         "Kappa is 1 for full agreement and 0 for what chance gives at these pass rates."),
    )]


def _length_bias(i: MeasureInputs) -> BaseModel | None:
    return records_length_bias(i.data.ok, units=i.data.units, n_resamples=i.n_resamples, seed=i.seed)


def _length_bias_tables(m: TaskMetrics) -> list[MetricTable]:
    lb = m.length_bias
    if lb is None:
        return []
    missing = f" {lb.rows_without_length} rows carry no length and are left out." if lb.rows_without_length else ""
    return [MetricTable(
        "Length bias: does the score move with the judged text's length?",
        ["label", "rows", "median length (characters)", "Spearman's rho of score and length"],
        [[k, str(lb.rows_by_label[k]), _n(lb.median_chars_by_label[k]), format(rho, "+.3f")]
         for k, rho in lb.spearman_by_label.items()],
        f"On all scored rows, within each label (the right verdict is the same for every row of a label). "
        f"{lb.verdict}{missing}",
    )]


def _self_preference(i: MeasureInputs) -> BaseModel | None:
    gens = [r.generator for r in i.data.ok]
    if not any(gens):
        return None
    return self_preference(i.data.s >= i.threshold, i.data.y, gens, i.self_generators,
                           n_resamples=max(500, i.n_resamples), n_permutations=max(500, i.n_resamples), seed=i.seed)


def _self_preference_tables(m: TaskMetrics) -> list[MetricTable]:
    """Pass rates by generator, then the gaps and their p-values."""
    sp = m.self_preference
    if sp is None:
        return []
    rows = [[s.generator + (" (self)" if s.is_self else ""), str(s.n), _f(s.pass_rate), _f(s.pass_rate_pos), _f(s.pass_rate_neg)]
            for s in sp.by_generator]
    for s in (sp.self, sp.other):
        rows.append([f"**all {s.generator}**", str(s.n), _f(s.pass_rate), _f(s.pass_rate_pos), _f(s.pass_rate_neg)])
    return [MetricTable(
        "Self-preference",
        ["generator", "rows", "pass rate", "P(pass | label 1)", "P(pass | label 0)"],
        rows,
        (f"Self patterns: {', '.join(sp.patterns) or '(none)'}. Gap label 1 (equal opportunity): "
         f"{format(sp.gap_pos, '+.3f')}, p = {_f(sp.p_value_pos, '.3g')}; gap label 0: "
         f"{format(sp.gap_neg, '+.3f')}, p = {_f(sp.p_value_neg, '.3g')}. {sp.message} "
         f"Verdicts at the shipped threshold on all scored rows."),
    )]


def _criteria(i: MeasureInputs) -> dict[str, object]:
    ok = i.data.ok
    return dict(criteria_thresholds(ok, strategy=str(i.strategy))) if any(r.labels and r.criteria for r in ok) else {}


def _criteria_tables(m: TaskMetrics) -> list[MetricTable]:
    if not m.criteria:
        return []
    return [MetricTable(
        "Criteria minimums",
        ["criterion", "minimum", "rows", "positives", "balanced accuracy (in-sample)"],
        [[k, _f(v.minimum), str(v.n), str(v.n_pos), _f(v.balanced_accuracy_in_sample)] for k, v in m.criteria.items()],
        "Written to criteria-thresholds.json for CriteriaJudge.",
    )]


MEASURES: tuple[Measure, ...] = (
    Measure("heldout", None, _metrics_tables),
    Measure("agreement", _agreement, _agreement_tables),
    Measure("length_bias", _length_bias, _length_bias_tables, written_when_none=False),
    Measure("heldout_by_group", None, _by_group_tables),
    Measure("calibration", None, _calibration_tables),
    Measure("abstain_band", None, _band_tables),
    Measure("self_preference", _self_preference, _self_preference_tables),
    Measure("criteria", _criteria, _criteria_tables),
)
"""Every sectioned field of ``TaskMetrics``, in the report's order (see the module docstring)."""
