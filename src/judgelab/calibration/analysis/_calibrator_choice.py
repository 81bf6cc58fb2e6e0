"""Which calibrator to ship, from held-out evidence.

``calibrator="auto"`` (the default) picks, on the tuning rows, the candidate
with the lowest cross-validated ECE: ``raw`` (no calibrator), ``temperature``,
``platt`` or ``isotonic``; candidates within ``TIE`` of the best count as
tied, and a tie goes to the simpler one (in that order). An explicit name is
shipped as asked. Either way, a calibrator that makes the held-out ECE worse
than the raw scores is not shipped: raw is, and the reason says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis._calibrators import CALIBRATORS, make_calibrator
from judgelab.calibration.analysis._metrics import fast_binary_metrics
from judgelab.calibration.data import CalibrationRecord, CalibratorChoiceRecord
from judgelab.errors import JudgelabError

__all__ = ["CALIBRATOR_CHOICES", "CalibratorChoice", "check_calibrator_name", "choose_calibrator"]

#: Simplest first: a tie goes to the earlier one.
CANDIDATES: tuple[str, ...] = ("raw", "temperature", "platt", "isotonic")
CALIBRATOR_CHOICES: tuple[str, ...] = ("auto", *CANDIDATES)
#: Cross-validated ECEs closer than this are a tie.
TIE = 0.005


def check_calibrator_name(name: str) -> str:
    """``name`` if it is ``auto``, ``raw`` or a calibrator kind; else a ``JudgelabError`` listing them."""
    if name not in CALIBRATOR_CHOICES:
        raise JudgelabError(f"Unknown calibrator {name!r}; choose one of {', '.join(CALIBRATOR_CHOICES)}.")
    return name


CalibratorChoice = CalibratorChoiceRecord
"""What ``choose_calibrator`` returns: the ``calibrator_choice`` of ``metrics.json`` (``CalibratorChoiceRecord``)."""


def _choice(shipped: str, requested: str, reason: str, cv_ece: Mapping[str, float | None] | None = None,
            replaced_by_raw: bool = False) -> CalibratorChoiceRecord:
    return CalibratorChoiceRecord(shipped=shipped, requested=requested, reason=reason, cv_ece=dict(cv_ece or {}),
                                  replaced_by_raw=replaced_by_raw)


def _eces(row: CalibrationRecord | Mapping[str, float] | None) -> tuple[float, float]:
    """A calibration row's held-out ECE before and after its calibrator (nan where undefined or absent)."""
    def num(x: float | None) -> float:
        return math.nan if x is None else float(x)

    if isinstance(row, CalibrationRecord):
        return num(row.ece_before), num(row.ece_after)
    row = row or {}
    return num(row.get("ece_before")), num(row.get("ece_after"))


def _ece(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> float:
    return float(fast_binary_metrics(y, s, 0.5)["ece"]) if len(y) else math.nan


def cross_validated_ece(s: npt.NDArray[np.float64], y: npt.NDArray[np.int_], folds: Sequence[npt.NDArray[np.intp]]) -> dict[str, float]:
    """ECE of each candidate over the pooled out-of-fold predictions (raw: the scores themselves)."""
    out = {"raw": _ece(y, s)}
    for kind in CALIBRATORS:
        pred = np.full(len(s), np.nan)
        for test in folds:
            train = np.ones(len(s), dtype=bool)
            train[test] = False
            try:
                pred[test] = make_calibrator(kind).fit(s[train], y[train]).predict(s[test])
            except Exception:  # e.g. one class among a fold's training rows
                pass
        ok = ~np.isnan(pred)
        out[kind] = _ece(y[ok], pred[ok]) if ok.all() else math.nan
    return out


def _pick(cv: Mapping[str, float]) -> str:
    usable = {k: v for k, v in cv.items() if not math.isnan(v)}
    if not usable:
        return "raw"
    best = min(usable.values())
    return next(k for k in CANDIDATES if k in usable and usable[k] <= best + TIE)


def _auto(s: npt.NDArray[np.float64], y: npt.NDArray[np.int_], folds: Sequence[npt.NDArray[np.intp]] | None) -> CalibratorChoice:
    if not folds:
        return _choice("raw", "auto", "raw scores shipped: too few tuning rows of each class to "
                                "cross-validate a calibrator (pass --calibrator NAME to fit one anyway)")
    cv = cross_validated_ece(s, y, folds)
    kind = _pick(cv)
    table = ", ".join(f"{k} {v:.3f}" for k, v in cv.items() if not math.isnan(v))
    what = "raw scores (no calibrator)" if kind == "raw" else f"the {kind} calibrator"
    return _choice(kind, "auto", f"auto picked {what}: the lowest {len(folds)}-fold cross-validated ECE "
                            f"on the {len(y)} tuning rows ({table}; within {TIE:g} the simpler one wins)", cv)


def choose_calibrator(
    requested: str,
    s_tuning: npt.NDArray[np.float64],
    y_tuning: npt.NDArray[np.int_],
    folds: Sequence[npt.NDArray[np.intp]] | None,
    heldout: Mapping[str, CalibrationRecord] | Mapping[str, Mapping[str, float]],
) -> CalibratorChoice:
    """Pick the calibrator to ship.

    Parameters
    ----------
    requested
        ``auto``, ``raw`` or a calibrator kind.
    s_tuning, y_tuning
        The tuning rows' scores and labels.
    folds
        Test-row indices of cross-validation folds over the tuning rows
        (``None`` when there are too few rows).
    heldout
        The analysis' held-out calibration table, ``{kind: CalibrationRecord}``
        (or ``{kind: {"ece_before", "ece_after", ...}}``); a calibrator whose
        ``ece_after`` exceeds its ``ece_before`` is replaced by raw scores.
    """
    check_calibrator_name(requested)
    if requested == "auto":
        choice = _auto(np.asarray(s_tuning, dtype=float), np.asarray(y_tuning), folds)
    elif requested == "raw":
        choice = _choice("raw", "raw", "raw scores shipped, as asked (--calibrator raw)")
    else:
        choice = _choice(requested, requested, f"the {requested} calibrator, as asked (--calibrator {requested})")
    if choice.shipped == "raw":
        return choice
    before, after = _eces(heldout.get(choice.shipped))
    if not (math.isnan(before) or math.isnan(after)) and after > before:
        return _choice("raw", requested, f"{choice.reason}; but it made the held-out ECE worse than the raw "
                       f"scores ({before:.3f} -> {after:.3f}), so raw scores are shipped instead", choice.cv_ece,
                       replaced_by_raw=True)
    return choice
