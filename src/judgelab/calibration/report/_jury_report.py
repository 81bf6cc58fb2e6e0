"""A jury against its members on the same rows: metrics with paired intervals, agreement, self-preference.

``jury_report(member_records, combine=...)`` combines the members' saved
scores with the ``Jury`` evaluator's own rule (``combine_scores``), so a
jury is measured without scoring anything again. It reports AUROC,
balanced accuracy and ECE of the jury and of every member, the paired
bootstrap interval of each difference (jury minus member, rows resampled
together, pairs of rows as clusters), Fleiss' kappa of the members'
verdicts, and self-preference (``self_preference``) of every judge towards
every member's family, on sets whose rows name their generator (FaithBench).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.calibration.analysis import Interval, bootstrap_many
from judgelab.calibration.policy import aligned_stages
from judgelab.calibration.analysis import fast_binary_metrics
from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.analysis import self_preference
from judgelab.evaluators.jury import combine_scores

__all__ = ["JuryReport", "fleiss_kappa", "jury_report"]

METRICS = ("auroc", "balanced_accuracy", "ece")


def fleiss_kappa(verdicts) -> float:
    """Fleiss' kappa of ``(n_raters, n_items)`` binary verdicts (nan when undefined)."""
    v = np.atleast_2d(np.asarray(verdicts, dtype=bool))
    r, n = v.shape
    if r < 2 or n == 0:
        return math.nan
    counts = np.stack([v.sum(axis=0), r - v.sum(axis=0)], axis=1).astype(float)  # (n, 2)
    p_item = ((counts ** 2).sum(axis=1) - r) / (r * (r - 1))
    p_cat = counts.sum(axis=0) / (n * r)
    p_e = float((p_cat ** 2).sum())
    return math.nan if p_e >= 1 else float((p_item.mean() - p_e) / (1 - p_e))


@dataclass(frozen=True)
class JuryReport:
    """The jury and its members on the same rows."""

    names: tuple[str, ...]  # members
    families: tuple[str, ...]
    combine: str
    n: int
    metrics: dict[str, dict[str, float]]  # system -> metric -> value
    differences: dict[str, dict[str, Interval]]  # member -> metric -> jury minus member
    kappa: float
    self_preference: dict[str, dict[str, Any]]  # system -> family -> SelfPreference

    def lines(self) -> list[str]:
        """The report as markdown."""
        out = [f"# Jury ({self.combine}) of {', '.join(self.names)} on {self.n} rows", "",
               f"Fleiss' kappa of the members' verdicts: {self.kappa:.3f}", "",
               "| judge | AUROC | balanced accuracy | ECE |", "|---|---|---|---|"]
        for system, m in self.metrics.items():
            out.append(f"| {system} | {m['auroc']:.3f} | {m['balanced_accuracy']:.3f} | {m['ece']:.3f} |")
        out += ["", "Jury minus member, paired bootstrap 95% intervals:", "",
                "| member | AUROC | balanced accuracy | ECE |", "|---|---|---|---|"]
        for name, d in self.differences.items():
            out.append(f"| {name} | " + " | ".join(f"{d[k]:+.3f}" for k in METRICS) + " |")
        out += ["", "Self-preference (equal-opportunity gap among label-1 rows: P(pass | own family) - "
                "P(pass | other)), per judge and family:", "", "| judge | " + " | ".join(self.families) + " |",
                "|---|" + "---|" * len(self.families)]
        for system, fams in self.self_preference.items():
            cells = []
            for f in self.families:
                sp = fams[f]
                if sp.measurable:
                    cells.append(f"{sp.gap_pos:+.3f} (p = {sp.p_value_pos:.2g})")
                elif math.isnan(sp.gap_pos.estimate):
                    cells.append(f"n/a: {sp.message.removeprefix('not measurable on this set: ')}")
                else:  # the point estimate, not concluded
                    cells.append(f"{sp.gap_pos.estimate:+.3f}, not concluded: "
                                 f"{sp.message.removeprefix('not measurable on this set: ')}")
            out.append(f"| {system} | " + " | ".join(cells) + " |")
        return out

    def write(self, path: str | Path) -> Path:
        """Write the markdown; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return path


def _metrics(y, s, passed) -> dict[str, float]:
    m = fast_binary_metrics(y, s, 0.5)  # AUROC and ECE do not depend on the threshold
    tpr = passed[y == 1].mean() if (y == 1).any() else math.nan
    tnr = (~passed[y == 0]).mean() if (y == 0).any() else math.nan
    return {"auroc": m["auroc"], "balanced_accuracy": float((tpr + tnr) / 2), "ece": m["ece"]}


def jury_report(member_records: Sequence[Sequence[ScoreRecord]], *, combine: str = "mean-logit",
                names: Sequence[str] | None = None, families: Sequence[str] | None = None,
                self_generators: Sequence[Sequence[str]] | None = None, thresholds: Sequence[float] | None = None,
                n_resamples: int = 1000) -> JuryReport:
    """Measure a jury of the members' runs (same rows) against each member.

    ``families`` and ``self_generators`` (fnmatch patterns per member) default to the members' model specs.
    ``thresholds`` are the members' decision thresholds (e.g. each run's shipped one): a member passes a row
    at or above its threshold, and a ``mean-logit`` jury at the mean logit of the thresholds; without them
    the records' own ``passed`` (and 0.5 for the jury). Bootstrap seed 0.
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
        passed = np.array([[bool(r.passed if r.passed is not None else r.score >= 0.5) for r in recs]
                           for recs in al.records])
        cut = 0.5
    jury = combine_scores(al.scores, passed, combine)  # type: ignore[arg-type]
    jury_passed = jury > 0.5 if combine == "vote" else jury >= cut
    y = al.labels
    metrics = {"jury": _metrics(y, jury, jury_passed)}
    metrics.update({n: _metrics(y, al.scores[k], passed[k]) for k, n in enumerate(names)})
    clusters = al.units if len(set(al.units)) < len(al.units) else None
    differences = {}
    for k, n in enumerate(names):
        def diff(y_, sj, pj, sm, pm):
            a, b = _metrics(y_, sj, pj.astype(bool)), _metrics(y_, sm, pm.astype(bool))
            return {m: a[m] - b[m] for m in METRICS}

        differences[n] = bootstrap_many(diff, [y, jury, jury_passed.astype(float), al.scores[k], passed[k].astype(float)],
                                        n_resamples=n_resamples, seed=seed, clusters=clusters)
    gens = [r.generator for r in al.records[0]]
    systems = {"jury": jury_passed, **{n: passed[k] for k, n in enumerate(names)}}
    unique = list(dict.fromkeys(fams))
    sp = {s: {f: self_preference(v, y, gens, pats[fams.index(f)], n_resamples=n_resamples, seed=seed) for f in unique}
          for s, v in systems.items()}
    return JuryReport(tuple(names), tuple(unique), combine, len(y), metrics, differences, fleiss_kappa(passed), sp)


def _families(names, families, patterns) -> tuple[list[str], list[tuple[str, ...]]]:
    if families is not None and patterns is not None:
        return list(families), [tuple(p) for p in patterns]
    from judgelab.errors import SpecError
    from judgelab.specs import load_spec

    fams, pats = [], []
    for k, n in enumerate(names):
        try:
            spec = load_spec(n)
            fam, pat = spec.family, tuple(spec.self_generators)
        except SpecError:
            fam, pat = n, ()
        fams.append(families[k] if families is not None else fam)
        pats.append(tuple(patterns[k]) if patterns is not None else pat)
    return fams, pats
