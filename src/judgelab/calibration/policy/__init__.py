"""Deployment decisions from saved scores: pass/fail/abstain policies with risk guarantees (LTT),
the CI drift gate and the pass-rate estimate.

One policy model (``Policy``, from ``judgelab.evaluators``): a policy is a cascade of one stage.
``fit_policy`` fits one stage's two thresholds, ``fit_cascade`` every stage's band jointly; both
return a ``PolicyFit`` from the arrays and a ``Policy``, and both are measured on held-out rows by
the one held-out method (``_heldout``).

Imports only ``data``, ``scoring`` and ``analysis``.
"""

from judgelab.calibration.policy._cascade_fit import CascadeFitOptions, cascade_decisions, fit_cascade_arrays
from judgelab.calibration.policy._cascade_policy import CascadePolicy, CascadeStage, aligned_stages, fit_cascade, load_cascade
from judgelab.calibration.policy._estimate import PassRateEstimate, estimate_pass_rate, ppi_mean_interval
from judgelab.calibration.policy._fit_result import CascadeFit, PolicyFit
from judgelab.calibration.policy._gate import GateBootstrap, GateFloors, GateResult, GateTest, gate
from judgelab.calibration.policy._heldout import fit_and_save_policy, heldout_cascade, heldout_policy
from judgelab.calibration.policy._ltt import LTTSettings, Risk, fit_arrays, policy_decisions
from judgelab.calibration.policy._policy import Policy, fit_policy, load_policy
from judgelab.calibration.policy._risk_bounds import betting_pvalue, binomial_pvalue, rows_needed
from judgelab.calibration.policy._risk_coverage import risk_coverage_curve

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
    "heldout_cascade",
    "heldout_policy",
    "load_policy",
    "policy_decisions",
    "ppi_mean_interval",
    "risk_coverage_curve",
    "rows_needed",
]
