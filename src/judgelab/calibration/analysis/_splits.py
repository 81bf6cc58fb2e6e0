"""Held-out rows: a dev/test split when the records carry one, else cross-validation folds over units.

A unit is a set of rows that belong together (``LabelledRow.unit`` and
``ScoreRecord.unit``, from the file's ``meta["pair"]``): its rows always land
on the same side, so nothing is tuned on the twin of a held-out row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgelab.calibration.data import warn_renamed

__all__ = ["SplitPlan", "group_folds", "split_plan", "unit_folds"]


def unit_folds(y: npt.NDArray[np.int_], units: npt.NDArray[np.str_], k: int, seed: int | None) -> list[npt.NDArray[np.intp]] | None:
    """Test-row indices of each cross-validation fold, or None when there are too few rows.

    Rows that share a unit (``ScoreRecord.unit``) always land in the same
    fold, so a threshold is never tuned on the twin of a held-out row.
    Folds are stratified by label. ``k`` is capped by the number of units
    holding each class; below 2 there is no cross-validation (``None``).
    When every unit is a single row this is plain ``StratifiedKFold``.
    """
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    units = np.asarray(units)
    k = min(k, len(set(units[y == 0])), len(set(units[y == 1])))
    if k < 2:
        return None
    random_state = 0 if seed is None else seed
    if len(set(units)) == len(units):
        splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=random_state)
        folds = [test for _, test in splitter.split(np.zeros(len(y)), y)]
    else:
        splitter = StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=random_state)
        folds = [test for _, test in splitter.split(np.zeros(len(y)), y, units)]
    folds = [f for f in folds if len(f)]
    return folds if len(folds) >= 2 else None


def group_folds(y: npt.NDArray[np.int_], groups: npt.NDArray[np.str_], k: int, seed: int | None) -> list[npt.NDArray[np.intp]] | None:
    """Deprecated name of ``unit_folds`` (warns; removed in the next release)."""
    warn_renamed("group_folds", "unit_folds", "judgelab.calibration.analysis")
    return unit_folds(y, groups, k, seed)


@dataclass(frozen=True)
class SplitPlan:
    """Which rows tune the threshold and which measure it.

    ``mode`` is ``split`` (dev tunes, test measures), ``cv`` (``folds``
    measure in turn; the shipped threshold is tuned on all rows) or
    ``in-sample`` (too few rows: tuned and measured on the same rows).
    """

    mode: str
    note: str
    tune: npt.NDArray[np.bool_]
    held: npt.NDArray[np.bool_]
    folds: list[npt.NDArray[np.intp]] | None = None


def split_plan(y: npt.NDArray[np.int_], splits: npt.NDArray[np.str_], units: npt.NDArray[np.str_], k_folds: int, seed: int | None) -> SplitPlan:
    """Dev/test when the rows carry both splits, else unit-grouped folds, else in-sample.

    The one place that decides how rows are held out: ``analyze`` tunes the
    threshold this way and ``heldout_policy`` measures a policy this way.
    """
    if (splits == "dev").any() and (splits == "test").any():
        return SplitPlan("split", "threshold tuned on the dev split, measured on the test split",
                         splits == "dev", splits == "test")
    everything = np.ones(len(y), dtype=bool)
    folds = unit_folds(y, units, k_folds, seed)
    if folds is None:
        return SplitPlan("in-sample", "too few rows of a class for cross-validation", everything, everything)
    note = f"{len(folds)}-fold cross-validation; the shipped threshold is tuned on all rows"
    return SplitPlan("cv", note, everything, everything, folds)
