"""The calibration report: one data model rendered by the Jinja templates (report.md, report.html),
its figures, metrics.json and the Deployment section.

Imports only the sub-packages before it.
"""

from judgelab.calibration.report._deployment import (
    Deployment,
    deployment_for,
    deployment_html,
    deployment_markdown,
    risk_coverage_curve,
)
from judgelab.calibration.report._plots import (
    analysis_figures,
)
from judgelab.calibration.report._report import (
    write_report,
)

from judgelab.calibration.report._cascade_report import (
    write_cascade_report,
)
from judgelab.calibration.report._jury_report import (
    JuryReport,
    fleiss_kappa,
    jury_report,
)

__all__ = [
    "JuryReport",
    "fleiss_kappa",
    "jury_report",
    "write_cascade_report",
    "Deployment",
    "analysis_figures",
    "deployment_for",
    "deployment_html",
    "deployment_markdown",
    "risk_coverage_curve",
    "write_report",
]
