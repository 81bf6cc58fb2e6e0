"""Analysis of saved scores (no model): metrics, bootstrap intervals, thresholds, calibrators,
self-preference, run comparison and per-criterion thresholds.

Imports only ``data`` and ``scoring``.
"""

from judgelab.calibration.analysis._analysis import (
    Analysis,
    analyze,
)
from judgelab.calibration.analysis._bootstrap import (
    Interval,
    Resampling,
    bootstrap_interval,
    bootstrap_many,
    paired_difference,
    unpaired_difference,
)
from judgelab.calibration.analysis._calibrator_choice import (
    CalibratorChoice,
    check_calibrator_name,
    choose_calibrator,
    cross_validated_ece,
)
from judgelab.calibration.analysis._calibrators import (
    CALIBRATORS,
    Calibrator,
    IsotonicCalibrator,
    NotFittedError,
    PlattCalibrator,
    TemperatureScaling,
    load_calibrator,
    make_calibrator,
)
from judgelab.calibration.analysis._shortcuts import ShortcutReport, shortcut_baselines
from judgelab.calibration.analysis._compare import (
    Comparison,
    compare_runs,
    mcnemar_test,
)
from judgelab.calibration.analysis._criteria_thresholds import (
    criteria_thresholds,
    write_criteria_thresholds,
)
from judgelab.calibration.analysis._metrics import (
    DegenerateMetricWarning,
    METRICS,
    THRESHOLD_METRICS,
    binary_metrics,
    calibration_bins,
    expected_calibration_error,
    fast_binary_metrics,
)
from judgelab.calibration.analysis._pairing import (
    PairResampling,
    grouped_bootstrap,
    pair_groups,
)
from judgelab.calibration.analysis._selfpref import (
    GeneratorStats,
    SelfPreference,
    is_self_generator,
    self_preference,
)
from judgelab.calibration.analysis._splits import (
    SplitPlan,
    group_folds,
    split_plan,
)
from judgelab.calibration.analysis._thresholds import (
    AbstainBand,
    ThresholdStrategy,
    abstain_band,
    choose_threshold,
    parse_strategy,
    threshold_curve,
)

__all__ = [
    "ShortcutReport",
    "shortcut_baselines",
    "AbstainBand",
    "Analysis",
    "CALIBRATORS",
    "Calibrator",
    "CalibratorChoice",
    "Comparison",
    "DegenerateMetricWarning",
    "GeneratorStats",
    "Interval",
    "IsotonicCalibrator",
    "METRICS",
    "NotFittedError",
    "PairResampling",
    "PlattCalibrator",
    "Resampling",
    "SelfPreference",
    "SplitPlan",
    "THRESHOLD_METRICS",
    "TemperatureScaling",
    "ThresholdStrategy",
    "abstain_band",
    "analyze",
    "binary_metrics",
    "bootstrap_interval",
    "bootstrap_many",
    "calibration_bins",
    "check_calibrator_name",
    "choose_calibrator",
    "choose_threshold",
    "compare_runs",
    "criteria_thresholds",
    "cross_validated_ece",
    "expected_calibration_error",
    "fast_binary_metrics",
    "group_folds",
    "grouped_bootstrap",
    "is_self_generator",
    "load_calibrator",
    "make_calibrator",
    "mcnemar_test",
    "pair_groups",
    "paired_difference",
    "parse_strategy",
    "self_preference",
    "split_plan",
    "threshold_curve",
    "unpaired_difference",
    "write_criteria_thresholds",
]
