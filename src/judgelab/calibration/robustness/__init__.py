"""``stress``: what moves a judge (attacks, benign perturbations, consistency probes), next to
its accuracy, as a Robustness section of the report.

Imports only the sub-packages before it.
"""

from judgelab.calibration.robustness._attack_file import read_attacks_file
from judgelab.calibration.robustness._attacks import BUILTIN_ATTACKS, TEXT_WHERE, TRANSFORM_WHERE, Attack, load_transform
from judgelab.calibration.robustness._consistency import (
    CHOICE_OPTIONS,
    PARAPHRASES,
    ChoiceProbe,
    NoulProbe,
    choice_orders,
    consistency_probes,
    paraphrase_evaluators,
)
from judgelab.calibration.robustness._metrics import (
    AttackStats,
    ConsistencyStats,
    LabelMassStats,
    attack_stats,
    choice_stats,
    label_mass_stats,
    noul_stats,
    paraphrase_stats,
)
from judgelab.calibration.robustness._perturb import (
    ATTACKS,
    BENIGN,
    DEFAULT_ATTACKS,
    Perturbation,
    TemplateLayout,
    perturb_rows,
    resolve_attacks,
    template_layout,
)
from judgelab.calibration.robustness._report import robustness_figure, robustness_section, robustness_sections, write_robustness_figures
from judgelab.calibration.robustness._results import FenceComparison, StressResult, TaskStress
from judgelab.calibration.robustness._stress import CONSISTENCY_CHECKS, StressOptions, stress

__all__ = [
    "ATTACKS",
    "Attack",
    "AttackStats",
    "BENIGN",
    "BUILTIN_ATTACKS",
    "CHOICE_OPTIONS",
    "CONSISTENCY_CHECKS",
    "ChoiceProbe",
    "ConsistencyStats",
    "DEFAULT_ATTACKS",
    "FenceComparison",
    "LabelMassStats",
    "NoulProbe",
    "PARAPHRASES",
    "Perturbation",
    "StressOptions",
    "StressResult",
    "TEXT_WHERE",
    "TRANSFORM_WHERE",
    "TaskStress",
    "TemplateLayout",
    "attack_stats",
    "choice_orders",
    "choice_stats",
    "consistency_probes",
    "label_mass_stats",
    "load_transform",
    "noul_stats",
    "paraphrase_evaluators",
    "paraphrase_stats",
    "perturb_rows",
    "read_attacks_file",
    "resolve_attacks",
    "robustness_figure",
    "robustness_section",
    "robustness_sections",
    "write_robustness_figures",
    "stress",
    "template_layout",
]
