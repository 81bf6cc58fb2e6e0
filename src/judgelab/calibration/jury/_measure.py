"""A jury against its members on the same rows: metrics with paired intervals, agreement, self-preference.

``measure_jury(member_records, combine=...)`` combines the members' saved
scores with the ``Jury`` evaluator's own rule (``combine_scores``), so a
jury is measured without scoring anything again. It measures AUROC,
balanced accuracy and ECE of the jury and of every member, the paired
bootstrap interval of each difference (jury minus member, rows resampled
together, rows of one unit drawn as one), Fleiss' kappa of the members'
verdicts, and self-preference (``self_preference``) of every judge towards
every member's family, on sets whose rows name their generator (FaithBench).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis import Interval, SelfPreference, bootstrap_many, fast_binary_metrics, fleiss_kappa, self_preference, shared_units
from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.policy import aligned_stages
from judgelab.evaluators.jury import combine_scores

__all__ = ["JURY_METRICS", "JuryMeasurement", "measure_jury"]

JURY_METRICS = ("auroc", "balanced_accuracy", "ece")


@dataclass(frozen=True)
class JuryMeasurement:
    """The jury and its members on the same rows.

    Attributes
    ----------
    names, families
        The members, and the families self-preference is measured towards (each once, in member order).
    combine
        The jury's rule (``"mean-logit"`` or ``"vote"``).
    n
        Rows every member scored.
    metrics
        System (``"jury"`` or a member) -> metric (``JURY_METRICS``) -> value.
    differences
        Member -> metric -> jury minus member (paired bootstrap interval).
    kappa
        Fleiss' kappa of the members' verdicts.
    self_preference
        System -> family -> ``SelfPreference``.
    """

    names: tuple[str, ...]
    families: tuple[str, ...]
    combine: str
    n: int
    metrics: dict[str, dict[str, float]]
    differences: dict[str, dict[str, Interval]]
    kappa: float
    self_preference: dict[str, dict[str, SelfPreference]]


def _metrics(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64], passed: npt.NDArray[np.bool_]) -> dict[str, float]:
    m = fast_binary_metrics(y, s, 0.5)  # AUROC and ECE do not depend on the threshold
    tpr = passed[y == 1].mean() if (y == 1).any() else math.nan
    tnr = (~passed[y == 0]).mean() if (y == 0).any() else math.nan
    return {"auroc": m["auroc"], "balanced_accuracy": float((tpr + tnr) / 2), "ece": m["ece"]}


def _passed(r: ScoreRecord) -> bool:
    """The record's own verdict, or its score at 0.5 when it has none."""
    return bool(r.passed) if r.passed is not None else r.score is not None and r.score >= 0.5


def _difference(y: npt.NDArray[np.int_], sj: npt.NDArray[np.float64], pj: npt.NDArray[np.float64], sm: npt.NDArray[np.float64],
                pm: npt.NDArray[np.float64]) -> dict[str, float]:
    """Jury minus member on one resample (verdicts arrive as floats from the bootstrap)."""
    a, b = _metrics(y, sj, pj.astype(bool)), _metrics(y, sm, pm.astype(bool))
    return {m: a[m] - b[m] for m in JURY_METRICS}


def measure_jury(member_records: Sequence[Sequence[ScoreRecord]], *, combine: str = "mean-logit",
                 names: Sequence[str] | None = None, families: Sequence[str] | None = None,
                 self_generators: Sequence[Sequence[str]] | None = None, thresholds: Sequence[float] | None = None,
                 n_resamples: int = 1000) -> JuryMeasurement:
    """Measure a jury of the members' runs (same rows) against each member.

    Parameters
    ----------
    member_records
        One scored run per member, on the same rows (``aligned_stages`` checks; ``DataError`` otherwise).
    combine
        The jury's rule: ``"mean-logit"`` or ``"vote"`` (``combine_scores``).
    names
        The members' names (default: each run's model).
    families, self_generators
        Each member's family and its generators' fnmatch patterns (default: from the members' model specs).
    thresholds
        The members' decision thresholds (e.g. each run's shipped one): a member passes a row at or above its
        threshold, and a ``mean-logit`` jury at the mean logit of the thresholds; without them the records' own
        ``passed`` (and 0.5 for the jury).
    n_resamples
        Bootstrap resamples (seed 0).

    Returns
    -------
    JuryMeasurement
    """
    seed = 0
    names = list(names or [next((r.model for r in recs if r.model), f"juror {k + 1}")
                           for k, recs in enumerate(member_records)])
    al = aligned_stages(member_records, names)
    fams, pats = _families(names, families, self_generators)
    if thresholds is not None:
        passed = al.scores >= np.asarray(thresholds, dtype=float)[:, None]
        cut = float(combine_scores(np.asarray(thresholds, dtype=float)[:, None], combine="mean-logit")[0])
    else:
        passed = np.array([[_passed(r) for r in recs] for recs in al.records])
        cut = 0.5
    jury = combine_scores(al.scores, passed, combine)  # type: ignore[arg-type]
    jury_passed = jury > 0.5 if combine == "vote" else jury >= cut
    y = al.labels
    metrics = {"jury": _metrics(y, jury, jury_passed)}
    metrics.update({n: _metrics(y, al.scores[k], passed[k]) for k, n in enumerate(names)})
    units = shared_units(al.units)
    differences = {
        n: bootstrap_many(_difference, [y, jury, jury_passed.astype(float), al.scores[k], passed[k].astype(float)],
                          n_resamples=n_resamples, seed=seed, units=units)
        for k, n in enumerate(names)
    }
    gens = [r.generator for r in al.records[0]]
    systems = {"jury": jury_passed, **{n: passed[k] for k, n in enumerate(names)}}
    unique = list(dict.fromkeys(fams))
    sp = {s: {f: self_preference(v, y.tolist(), gens, pats[fams.index(f)], n_resamples=n_resamples, seed=seed) for f in unique}
          for s, v in systems.items()}
    return JuryMeasurement(tuple(names), tuple(unique), combine, len(y), metrics, differences, fleiss_kappa(passed), sp)


def _families(names: Sequence[str], families: Sequence[str] | None,
              patterns: Sequence[Sequence[str]] | None) -> tuple[list[str], list[tuple[str, ...]]]:
    if families is not None and patterns is not None:
        return list(families), [tuple(p) for p in patterns]
    from judgelab.errors import SpecError
    from judgelab.specs import load_spec

    fams: list[str] = []
    pats: list[tuple[str, ...]] = []
    for k, n in enumerate(names):
        try:
            spec = load_spec(n)
            fam, pat = spec.family, tuple(spec.self_generators)
        except SpecError:
            fam, pat = n, ()
        fams.append(families[k] if families is not None else fam)
        pats.append(tuple(patterns[k]) if patterns is not None else pat)
    return fams, pats
