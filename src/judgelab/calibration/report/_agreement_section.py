"""The report's "Agreement with the labels" and "Length bias" sections (``Analysis.agreement``, ``.length_bias``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from judgelab.calibration.report._model import Section, table_section

if TYPE_CHECKING:  # pragma: no cover
    from judgelab.calibration.analysis import Analysis

__all__ = ["agreement_sections"]


def _n(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:g}"


def agreement_sections(a: "Analysis") -> list[Section]:
    """Sections of one table each: kappa, TPR and TNR with intervals, then the length check."""
    tables: list[Section] = []
    g = a.agreement
    if g is not None:
        tables.append(table_section(
            "Agreement with the labels (95% bootstrap intervals)",
            ["figure", "value", "rows"],
            [["Cohen's kappa", format(g.kappa), str(g.n)],
             ["TPR: rows labelled 1 that pass", format(g.tpr), str(g.n_pos)],
             ["TNR: rows labelled 0 that fail", format(g.tnr), str(g.n_neg)]],
            (f"Verdicts at the shipped threshold ({g.threshold:.3f}"
             + (", each fold's own threshold" if a.mode == "cv" else "")
             + f") against the labels, on {g.rows} rows; rows of one meta.pair group, if any, are resampled together. "
             "Kappa is 1 for full agreement and 0 for what chance gives at these pass rates."),
        ))
    lb = a.length_bias
    if lb is not None:
        missing = f" {lb.n_missing} rows carry no length and are left out." if lb.n_missing else ""
        tables.append(table_section(
            "Length bias: does the score move with the judged text's length?",
            ["label", "rows", "median length (characters)", "Spearman's rho of score and length"],
            [[str(k), str(lb.n[k]), _n(lb.median_chars[k]), format(lb.rho[k], "+.3f")] for k in lb.rho],
            f"On all scored rows, within each label (the right verdict is the same for every row of a label). "
            f"{lb.verdict()}{missing}",
        ))
    return tables
