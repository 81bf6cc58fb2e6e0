"""A jury measured against its members on the same rows, from their saved scores (no model needed).

``measure_jury`` computes; ``report.jury_report`` renders what it computes. Imports only the
sub-packages before it (``data``, ``analysis``, ``policy``).
"""

from judgelab.calibration.jury._measure import JURY_METRICS, JuryMeasurement, measure_jury

__all__ = [
    "JURY_METRICS",
    "JuryMeasurement",
    "measure_jury",
]
