"""The sentences ``analyze`` writes into a task's ``TaskMetrics``: the headline and the chance note."""

from __future__ import annotations

import math

from judgelab.calibration.analysis._honesty import RunCompleteness
from judgelab.calibration.data import IntervalRecord, TaskMetrics

__all__ = ["chance_note", "headline"]


def _nan(x: float | None) -> float:
    """A run file's undefined figure (``None``) as the nan it was computed as."""
    return math.nan if x is None else x


def chance_note(heldout: dict[str, IntervalRecord]) -> str | None:
    """A plain warning when AUROC's interval includes 0.5."""
    au = heldout.get("auroc")
    if au is None or au.estimate is None:
        return None
    if au.low is not None and au.high is not None and au.low <= 0.5 <= au.high:
        return (
            f"AUROC {au} includes 0.5: on this set the judge's scores are not "
            "distinguishable from chance. Do not ship it for this task without a better model."
        )
    return None


def headline(m: TaskMetrics, single_class: int | None) -> str:
    """The one sentence a user wants first ("Partial run, on N of M rows: ..." when rows failed).

    ``m`` is the task's figures without the headline; ``single_class`` the label when every scored row has it.
    """
    rows = m.rows
    scope = RunCompleteness(rows.total, rows.scored).scope if rows is not None else ""
    text = _headline(m, single_class)
    return f"Partial run, {scope}: {text}" if scope else text


def _headline(m: TaskMetrics, single_class: int | None) -> str:
    t = m.threshold
    if single_class is not None:
        return (
            f"No threshold to ship: every scored row has label {single_class}, so no threshold "
            f"can be chosen from evidence (the {t.value:.3f} below is not one); "
            f"add rows of label {1 - single_class}."
        )
    ba = (m.heldout or {}).get("balanced_accuracy")
    where = {
        "split": f"on {t.n_heldout} held-out test rows (tuned on {t.n_tuning} dev rows)",
        "cv": f"on held-out folds ({t.n_heldout} rows, {t.note})",
        "in-sample": f"on the {t.n_heldout} rows it was tuned on (IN-SAMPLE: {t.note})",
    }[t.mode or "in-sample"]
    return f"Ship threshold {t.value:.3f}: expected balanced accuracy {ba} {where}; {_ece_text(m)}; {_sp_text(m)}."


def _ece_text(m: TaskMetrics) -> str:
    calibration = m.calibration or {}
    kind = m.calibrator_choice.shipped if m.calibrator_choice is not None else "raw"
    if kind == "raw":
        raw = next((c.ece_before for c in calibration.values() if c.ece_before is not None), math.nan)
        return f"no calibrator shipped, raw ECE {raw:.3f} (held-out)"
    cal = calibration.get(kind)
    if cal is None or cal.ece_after is None:
        return "calibrated ECE: n/a"
    return f"calibrated ECE {cal.ece_after:.3f} ({kind}, held-out; raw {_nan(cal.ece_before):.3f})"


def _sp_text(m: TaskMetrics) -> str:
    sp = m.self_preference
    if sp is not None and sp.measurable:
        return f"self-preference gap {sp.gap_pos:+.3f} (p = {_nan(sp.p_value_pos):.3g})"
    return "self-preference gap: not measurable on this set"
