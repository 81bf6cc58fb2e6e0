"""A jury against its members on the same rows: metrics with paired intervals, agreement, self-preference.

``jury_report(member_records, combine=...)`` combines the members' saved
scores with the ``Jury`` evaluator's own rule (``combine_scores``), so a
jury is measured without scoring anything again. It reports AUROC,
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
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.calibration.analysis import Interval, bootstrap_many
from judgelab.calibration.policy import aligned_stages
from judgelab.calibration.analysis import fast_binary_metrics
from judgelab.calibration.analysis import fleiss_kappa
from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.analysis import self_preference
from judgelab.calibration.report._model import Block, Paragraph, Report, Table
from judgelab.calibration.report._render import render_markdown
from judgelab.evaluators.jury import combine_scores

__all__ = ["JuryReport", "jury_report"]

METRICS = ("auroc", "balanced_accuracy", "ece")


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

    def report(self) -> Report:
        """The report: the members' agreement, every judge's metrics, the jury's differences, self-preference."""
        blocks: list[Block] = [
            Paragraph(f"Fleiss' kappa of the members' verdicts: {self.kappa:.3f}"),
            Table(("judge", "AUROC", "balanced accuracy", "ECE"),
                  tuple((system, f"{m['auroc']:.3f}", f"{m['balanced_accuracy']:.3f}", f"{m['ece']:.3f}")
                        for system, m in self.metrics.items())),
            Paragraph("Jury minus member, paired bootstrap 95% intervals:"),
            Table(("member", "AUROC", "balanced accuracy", "ECE"),
                  tuple((name, *(f"{d[k]:+.3f}" for k in METRICS)) for name, d in self.differences.items())),
            Paragraph("Self-preference (equal-opportunity gap among label-1 rows: P(pass | own family) - "
                      "P(pass | other)), per judge and family:"),
            Table(("judge", *self.families),
                  tuple((system, *(_self_preference_cell(fams[f]) for f in self.families))
                        for system, fams in self.self_preference.items())),
        ]
        return Report(f"Jury ({self.combine}) of {', '.join(self.names)} on {self.n} rows", tuple(blocks))

    def lines(self) -> list[str]:
        """The report as markdown lines."""
        return render_markdown(self.report()).splitlines()

    def write(self, path: str | Path) -> Path:
        """Write the markdown; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_markdown(self.report()), encoding="utf-8")
        return path


def _self_preference_cell(sp: Any) -> str:
    """One judge's self-preference towards one family: the gap and its p-value, or why it is not concluded."""
    why = sp.message.removeprefix("not measurable on this set: ")
    if sp.measurable:
        return f"{sp.gap_pos:+.3f} (p = {sp.p_value_pos:.2g})"
    if math.isnan(sp.gap_pos.estimate):
        return f"n/a: {why}"
    return f"{sp.gap_pos.estimate:+.3f}, not concluded: {why}"  # the point estimate, not concluded


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
    units = al.units if len(set(al.units)) < len(al.units) else None
    differences = {}
    for k, n in enumerate(names):
        def diff(y_, sj, pj, sm, pm):
            a, b = _metrics(y_, sj, pj.astype(bool)), _metrics(y_, sm, pm.astype(bool))
            return {m: a[m] - b[m] for m in METRICS}

        differences[n] = bootstrap_many(diff, [y, jury, jury_passed.astype(float), al.scores[k], passed[k].astype(float)],
                                        n_resamples=n_resamples, seed=seed, units=units)
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
