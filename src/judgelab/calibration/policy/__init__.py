"""Deployment decisions from saved scores: pass/fail/abstain policies with risk guarantees (LTT),
the CI drift gate and the pass-rate estimate.

Imports only ``data``, ``scoring`` and ``analysis``.
"""

from judgelab.calibration.policy._estimate import (
    PassRateEstimate,
    estimate_pass_rate,
    ppi_mean_interval,
)
from judgelab.calibration.policy._gate import (
    GateBootstrap,
    GateFloors,
    GateResult,
    GateTest,
    gate,
)
from judgelab.calibration.policy._ltt import (
    LTTSettings,
    PolicyFit,
    Risk,
    fit_arrays,
    policy_decisions,
)
from judgelab.calibration.policy._policy import (
    Policy,
    fit_and_save_policy,
    fit_policy,
    heldout_policy,
    load_policy,
)
from judgelab.calibration.policy._risk_bounds import (
    betting_pvalue,
    binomial_pvalue,
    rows_needed,
)

from judgelab.calibration.policy._risk_coverage import risk_coverage_curve
from judgelab.calibration.policy._cascade_fit import (
    CascadeFit,
    CascadeFitOptions,
    cascade_decisions,
    fit_cascade_arrays,
)
from judgelab.calibration.policy._cascade_policy import (
    CascadePolicy,
    CascadeStage,
    aligned_stages,
    fit_cascade,
    load_cascade,
)

__all__ = [
    "GateBootstrap",
    "GateFloors",
    "CascadeFit",
    "CascadeFitOptions",
    "CascadePolicy",
    "CascadeStage",
    "aligned_stages",
    "cascade_decisions",
    "fit_cascade",
    "fit_cascade_arrays",
    "load_cascade",
    "GateResult",
    "GateTest",
    "LTTSettings",
    "PassRateEstimate",
    "Policy",
    "PolicyFit",
    "Risk",
    "betting_pvalue",
    "binomial_pvalue",
    "estimate_pass_rate",
    "fit_and_save_policy",
    "fit_arrays",
    "fit_policy",
    "gate",
    "heldout_policy",
    "load_policy",
    "policy_decisions",
    "ppi_mean_interval",
    "risk_coverage_curve",
    "rows_needed",
]
