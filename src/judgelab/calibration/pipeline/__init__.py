"""``calibrate``: load a judge, score a labelled set, analyse it and write the report in one call.

Imports only the sub-packages before it.
"""

from judgelab.calibration.pipeline._analyze_run import RunAnalysis, analyze_records, analyze_run
from judgelab.calibration.pipeline._deployment import deployment_for
from judgelab.calibration.pipeline._judge import task_identity
from judgelab.calibration.pipeline._options import CalibrationOptions
from judgelab.calibration.pipeline._suite import CalibrationResult, calibrate

__all__ = [
    "CalibrationOptions",
    "CalibrationResult",
    "RunAnalysis",
    "analyze_records",
    "analyze_run",
    "calibrate",
    "deployment_for",
    "task_identity",
]
