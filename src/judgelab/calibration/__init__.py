"""The calibration suite: how good is a judge on labelled data, and which threshold to ship.

Load or import a labelled set, score it with any ``Evaluator`` (resumable),
then analyse the saved scores without the model: metrics with bootstrap
intervals, a threshold tuned on one split and reported on another, an
abstain band, calibrators, self-preference bias and a report.

``stress`` adds what moves the judge: seeded attacks on the judged text,
benign perturbations and consistency checks, scored resumably with the same
evaluator and threshold, reported as flip rates with cluster-bootstrap
intervals in a "Robustness" section.
"""

from judgelab.calibration._analysis import Analysis, analyze
from judgelab.calibration._bootstrap import Interval, bootstrap_interval, bootstrap_many
from judgelab.calibration._cascade_fit import CascadeFit, CascadeFitOptions, cascade_decisions, fit_cascade_arrays
from judgelab.calibration._cascade_policy import CascadePolicy, CascadeStage, aligned_stages, fit_cascade, load_cascade
from judgelab.calibration._cascade_report import heldout_cascade, write_cascade_report
from judgelab.calibration._jury_report import JuryReport, fleiss_kappa, jury_report
from judgelab.calibration._calibrators import (
    CALIBRATORS,
    Calibrator,
    IsotonicCalibrator,
    NotFittedError,
    PlattCalibrator,
    TemperatureScaling,
    load_calibrator,
    make_calibrator,
)
from judgelab.calibration._compare import Comparison, compare_runs, mcnemar_test
from judgelab.calibration._criteria_thresholds import criteria_thresholds, write_criteria_thresholds
from judgelab.calibration._executor import (
    BlockReport,
    ExecutionReport,
    Executor,
    LocalExecutor,
    ReplicaReport,
    plan_blocks,
)
from judgelab.calibration._factory import EvaluatorFactory
from judgelab.calibration._importers import (
    IMPORTERS,
    import_faithbench,
    import_halueval_general,
    import_halueval_qa,
    import_llm_aggrefact,
    import_set,
    import_summedits,
    import_wice,
)
from judgelab.calibration._metrics import (
    DegenerateMetricWarning,
    binary_metrics,
    calibration_bins,
    expected_calibration_error,
)
from judgelab.calibration._estimate import PassRateEstimate, estimate_pass_rate, ppi_mean_interval
from judgelab.calibration._gate import GateResult, gate
from judgelab.calibration._policy import Policy, fit_policy, heldout_policy, load_policy
from judgelab.calibration._report import write_report
from judgelab.calibration._rows import LabelledRow, LabelledSet, load_rows, write_rows
from judgelab.calibration._ray_executor import RayExecutor  # imports ray only when it runs
from judgelab.calibration._run import ResumePlan, ScoreRecord, plan_resume, read_scores, row_hash, run
from judgelab.calibration._selfpref import SelfPreference, is_self_generator, self_preference
from judgelab.calibration._suite import (
    DEFAULT_EVALUATORS,
    CalibrationResult,
    analyze_run,
    calibrate,
    default_set_path,
    resolve_set,
)
from judgelab.calibration._stress import CONSISTENCY_CHECKS, FenceComparison, StressResult, TaskStress, stress
from judgelab.calibration._stress_perturb import ATTACKS, DEFAULT_ATTACKS, Perturbation, perturb_rows, resolve_attacks
from judgelab.calibration._thresholds import (
    AbstainBand,
    ThresholdStrategy,
    abstain_band,
    choose_threshold,
    parse_strategy,
    threshold_curve,
)

__all__ = [
    "CascadeFit",
    "CascadeFitOptions",
    "CascadePolicy",
    "CascadeStage",
    "JuryReport",
    "aligned_stages",
    "cascade_decisions",
    "fit_cascade",
    "fit_cascade_arrays",
    "fleiss_kappa",
    "heldout_cascade",
    "jury_report",
    "load_cascade",
    "write_cascade_report",
    "ATTACKS",
    "CONSISTENCY_CHECKS",
    "DEFAULT_ATTACKS",
    "FenceComparison",
    "Perturbation",
    "StressResult",
    "TaskStress",
    "import_summedits",
    "perturb_rows",
    "resolve_attacks",
    "stress",
    "AbstainBand",
    "Analysis",
    "BlockReport",
    "CALIBRATORS",
    "CalibrationResult",
    "Calibrator",
    "Comparison",
    "DEFAULT_EVALUATORS",
    "DegenerateMetricWarning",
    "EvaluatorFactory",
    "ExecutionReport",
    "Executor",
    "GateResult",
    "IMPORTERS",
    "Interval",
    "IsotonicCalibrator",
    "LabelledRow",
    "LabelledSet",
    "LocalExecutor",
    "NotFittedError",
    "PassRateEstimate",
    "Policy",
    "PlattCalibrator",
    "RayExecutor",
    "ReplicaReport",
    "ResumePlan",
    "ScoreRecord",
    "SelfPreference",
    "TemperatureScaling",
    "ThresholdStrategy",
    "abstain_band",
    "analyze",
    "analyze_run",
    "binary_metrics",
    "bootstrap_interval",
    "bootstrap_many",
    "calibrate",
    "calibration_bins",
    "choose_threshold",
    "compare_runs",
    "criteria_thresholds",
    "default_set_path",
    "estimate_pass_rate",
    "expected_calibration_error",
    "fit_policy",
    "gate",
    "heldout_policy",
    "import_faithbench",
    "import_halueval_general",
    "import_halueval_qa",
    "import_llm_aggrefact",
    "import_set",
    "import_wice",
    "is_self_generator",
    "load_calibrator",
    "load_policy",
    "load_rows",
    "make_calibrator",
    "mcnemar_test",
    "parse_strategy",
    "plan_blocks",
    "plan_resume",
    "ppi_mean_interval",
    "read_scores",
    "resolve_set",
    "row_hash",
    "run",
    "self_preference",
    "threshold_curve",
    "write_criteria_thresholds",
    "write_report",
    "write_rows",
]
