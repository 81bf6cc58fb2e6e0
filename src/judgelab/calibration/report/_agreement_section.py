"""The report's "Agreement with the labels" and "Length bias" sections (``TaskMetrics.agreement``, ``.length_bias``)."""

from __future__ import annotations

from judgelab.calibration.data import TaskMetrics
from judgelab.calibration.report._model import Section, table_section

__all__ = ["agreement_sections"]


def _n(x: float | None) -> str:
    return "n/a" if x is None else f"{x:g}"


def agreement_sections(m: TaskMetrics) -> list[Section]:
    """Sections of one table each: kappa, TPR and TNR with intervals, then the length check."""
    tables: list[Section] = []
    g = m.agreement
    if g is not None:
        tables.append(table_section(
            "Agreement with the labels (95% bootstrap intervals)",
            ["figure", "value", "rows"],
            [["Cohen's kappa", format(g.cohen_kappa), str(g.n)],
             ["TPR: rows labelled 1 that pass", format(g.tpr), str(g.n_label_1)],
             ["TNR: rows labelled 0 that fail", format(g.tnr), str(g.n_label_0)]],
            (f"Verdicts at the shipped threshold ({g.threshold:.3f}"
             + (", each fold's own threshold" if m.threshold.mode == "cv" else "")
             + f") against the labels, on {g.rows} rows; rows of one meta.pair group, if any, are resampled together. "
             "Kappa is 1 for full agreement and 0 for what chance gives at these pass rates."),
        ))
    lb = m.length_bias
    if lb is not None:
        missing = f" {lb.rows_without_length} rows carry no length and are left out." if lb.rows_without_length else ""
        tables.append(table_section(
            "Length bias: does the score move with the judged text's length?",
            ["label", "rows", "median length (characters)", "Spearman's rho of score and length"],
            [[k, str(lb.rows_by_label[k]), _n(lb.median_chars_by_label[k]), format(rho, "+.3f")]
             for k, rho in lb.spearman_by_label.items()],
            f"On all scored rows, within each label (the right verdict is the same for every row of a label). "
            f"{lb.verdict}{missing}",
        ))
    return tables
