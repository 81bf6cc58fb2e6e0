"""Analysis of saved scores (no model): metrics, bootstrap intervals, thresholds, calibrators,
self-preference, run comparison and per-criterion thresholds.

Imports only ``data`` and ``scoring``.
"""

from judgelab.calibration.analysis._agreement import (
    Agreement,
    LengthBias,
    agreement,
    cohen_kappa_score,
    length_bias,
    records_length_bias,
    spearman_correlation,
    true_negative_rate,
    true_positive_rate,
)
from judgelab.calibration.analysis._analysis import Analysis, PlotArrays, analyze, stated_warnings
from judgelab.calibration.analysis._bootstrap import (
    Interval,
    Resampling,
    bootstrap_interval,
    bootstrap_many,
    paired_difference,
    shared_units,
    unpaired_difference,
)
from judgelab.calibration.analysis._calibrator_choice import CalibratorChoice, check_calibrator_name, choose_calibrator, cross_validated_ece
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
from judgelab.calibration.analysis._compare import Comparison, compare_runs, mcnemar_test
from judgelab.calibration.analysis._criteria_thresholds import criteria_thresholds, write_criteria_thresholds
from judgelab.calibration.analysis._honesty import MIN_INTERVAL_UNITS, RunCompleteness, check_publishable, interval_warning, run_completeness
from judgelab.calibration.analysis._measures import MEASURES, Measure, MeasureInputs, MetricTable
from judgelab.calibration.analysis._metrics import (
    METRICS,
    THRESHOLD_METRICS,
    DegenerateMetricWarning,
    binary_metrics,
    calibration_bins,
    expected_calibration_error,
    fast_binary_metrics,
)
from judgelab.calibration.analysis._pairing import PairResampling, pair_groups, pair_units, unit_bootstrap
from judgelab.calibration.analysis._rater_agreement import fleiss_kappa
from judgelab.calibration.analysis._selfpref import GeneratorStats, SelfPreference, is_self_generator, self_preference
from judgelab.calibration.analysis._shortcuts import ShortcutReport, shortcut_baselines
from judgelab.calibration.analysis._splits import SplitPlan, group_folds, split_plan, unit_folds
from judgelab.calibration.analysis._thresholds import AbstainBand, ThresholdStrategy, abstain_band, choose_threshold, parse_strategy, threshold_curve

__all__ = [
    "MIN_INTERVAL_UNITS",
    "RunCompleteness",
    "check_publishable",
    "interval_warning",
    "run_completeness",
    "ShortcutReport",
    "shortcut_baselines",
    "AbstainBand",
    "Agreement",
    "Analysis",
    "PlotArrays",
    "CALIBRATORS",
    "Calibrator",
    "CalibratorChoice",
    "Comparison",
    "DegenerateMetricWarning",
    "GeneratorStats",
    "Interval",
    "IsotonicCalibrator",
    "LengthBias",
    "MEASURES",
    "METRICS",
    "Measure",
    "MeasureInputs",
    "MetricTable",
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
    "agreement",
    "analyze",
    "stated_warnings",
    "binary_metrics",
    "bootstrap_interval",
    "bootstrap_many",
    "calibration_bins",
    "check_calibrator_name",
    "choose_calibrator",
    "choose_threshold",
    "cohen_kappa_score",
    "compare_runs",
    "criteria_thresholds",
    "cross_validated_ece",
    "expected_calibration_error",
    "fast_binary_metrics",
    "fleiss_kappa",
    "group_folds",
    "is_self_generator",
    "length_bias",
    "load_calibrator",
    "make_calibrator",
    "mcnemar_test",
    "pair_groups",
    "pair_units",
    "paired_difference",
    "parse_strategy",
    "records_length_bias",
    "self_preference",
    "shared_units",
    "spearman_correlation",
    "split_plan",
    "threshold_curve",
    "true_negative_rate",
    "true_positive_rate",
    "unit_bootstrap",
    "unit_folds",
    "unpaired_difference",
    "write_criteria_thresholds",
]
