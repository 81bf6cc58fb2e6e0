"""``calibrate``: load a judge, score a labelled set, analyse it and write the report in one call.

Imports only the sub-packages before it.
"""

from judgelab.calibration.pipeline._options import (
    CalibrationOptions,
)
from judgelab.calibration.pipeline._suite import (
    CalibrationResult,
    analyze_run,
    calibrate,
)

__all__ = [
    "CalibrationOptions",
    "CalibrationResult",
    "analyze_run",
    "calibrate",
]
