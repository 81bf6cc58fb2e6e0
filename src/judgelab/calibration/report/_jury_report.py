"""The jury report: ``measure_jury``'s result (``calibration.jury``) rendered to the shared report model.

Nothing is computed here: ``jury_report`` measures (``measure_jury``) and
returns a ``JuryReport``, the measurement that also renders itself (the
members' agreement, every judge's metrics, the jury's paired differences,
self-preference) as a ``Report``, markdown lines or a written file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgelab.calibration.analysis import SelfPreference
from judgelab.calibration.data import ScoreRecord
from judgelab.calibration.jury import JURY_METRICS, JuryMeasurement, measure_jury
from judgelab.calibration.report._model import Block, Paragraph, Report, Table
from judgelab.calibration.report._render import render_markdown

__all__ = ["JuryReport", "jury_document", "jury_report"]


def _self_preference_cell(sp: SelfPreference) -> str:
    """One judge's self-preference towards one family: the gap and its p-value, or why it is not concluded."""
    why = sp.message.removeprefix("not measurable on this set: ")
    if sp.measurable:
        return f"{sp.gap_pos:+.3f} (p = {sp.p_value_pos:.2g})"
    if sp.gap_pos.estimate is None:
        return f"n/a: {why}"
    return f"{sp.gap_pos.estimate:+.3f}, not concluded: {why}"  # the point estimate, not concluded


def jury_document(m: JuryMeasurement) -> Report:
    """The report of a jury measurement: the members' agreement, every judge's metrics, the jury's
    differences, self-preference."""
    blocks: list[Block] = [
        Paragraph(f"Fleiss' kappa of the members' verdicts: {m.kappa:.3f}"),
        Table(("judge", "AUROC", "balanced accuracy", "ECE"),
              tuple((system, f"{v['auroc']:.3f}", f"{v['balanced_accuracy']:.3f}", f"{v['ece']:.3f}")
                    for system, v in m.metrics.items())),
        Paragraph("Jury minus member, paired bootstrap 95% intervals:"),
        Table(("member", "AUROC", "balanced accuracy", "ECE"),
              tuple((name, *(f"{d[k]:+.3f}" for k in JURY_METRICS)) for name, d in m.differences.items())),
        Paragraph("Self-preference (equal-opportunity gap among label-1 rows: P(pass | own family) - "
                  "P(pass | other)), per judge and family:"),
        Table(("judge", *m.families),
              tuple((system, *(_self_preference_cell(fams[f]) for f in m.families))
                    for system, fams in m.self_preference.items())),
    ]
    return Report(f"Jury ({m.combine}) of {', '.join(m.names)} on {m.n} rows", tuple(blocks))


@dataclass(frozen=True)
class JuryReport(JuryMeasurement):
    """A ``JuryMeasurement`` that renders itself (``jury_document``)."""

    @classmethod
    def of(cls, measurement: JuryMeasurement) -> "JuryReport":
        """The report of ``measurement`` (its fields, unchanged)."""
        return cls(**{f.name: getattr(measurement, f.name) for f in dataclasses.fields(measurement)})

    def report(self) -> Report:
        """The report: the members' agreement, every judge's metrics, the jury's differences, self-preference."""
        return jury_document(self)

    def lines(self) -> list[str]:
        """The report as markdown lines."""
        return render_markdown(self.report()).splitlines()

    def write(self, path: str | Path) -> Path:
        """Write the markdown; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_markdown(self.report()), encoding="utf-8")
        return path


def jury_report(member_records: Sequence[Sequence[ScoreRecord]], *, combine: str = "mean-logit",
                names: Sequence[str] | None = None, families: Sequence[str] | None = None,
                self_generators: Sequence[Sequence[str]] | None = None, thresholds: Sequence[float] | None = None,
                n_resamples: int = 1000) -> JuryReport:
    """``measure_jury`` (same parameters), returned as a ``JuryReport`` that renders itself.

    ``judgelab jury`` prints its ``lines()`` and writes it to ``jury.md``.
    """
    return JuryReport.of(measure_jury(member_records, combine=combine, names=names, families=families,
                                      self_generators=self_generators, thresholds=thresholds,
                                      n_resamples=n_resamples))
