"""Reports: one report model (``Report`` of ``Section``s of blocks) and one renderer (markdown, HTML);
the calibration report built on them, its figures, metrics.json and the Deployment section; the
cascade and jury reports.

Computing lives below (``analysis``, ``policy``, ``jury``); what is here turns results into a ``Report`` and
writes it. Imports only the sub-packages before it.
"""

# computed in analysis and policy; kept public here, where they were exported before
from judgelab.calibration.analysis import fleiss_kappa
from judgelab.calibration.policy import risk_coverage_curve
from judgelab.calibration.report._cascade_report import cascade_report, write_cascade_report
from judgelab.calibration.report._deployment import Deployment, deployment_section
from judgelab.calibration.report._jury_report import JuryReport, jury_document, jury_report
from judgelab.calibration.report._model import Block, Bullets, Code, Facts, Figure, Gallery, Paragraph, Report, Section, Table, table_section
from judgelab.calibration.report._plots import analysis_figures
from judgelab.calibration.report._render import STYLE, render_html, render_markdown
from judgelab.calibration.report._report import calibration_report, write_report

__all__ = [
    "Block",
    "Bullets",
    "Code",
    "Deployment",
    "Facts",
    "Figure",
    "Gallery",
    "JuryReport",
    "Paragraph",
    "Report",
    "STYLE",
    "Section",
    "Table",
    "analysis_figures",
    "calibration_report",
    "cascade_report",
    "deployment_section",
    "fleiss_kappa",
    "jury_document",
    "jury_report",
    "render_html",
    "render_markdown",
    "risk_coverage_curve",
    "table_section",
    "write_cascade_report",
    "write_report",
]
