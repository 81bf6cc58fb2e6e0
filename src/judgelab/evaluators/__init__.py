"""Spring AI's evaluation SPI and judgelab's evaluators."""

from judgelab.evaluators._builtins import BUILTIN_EVALUATORS
from judgelab.evaluators._chunking import chunk_text, split_sentences
from judgelab.evaluators._criterion_types import CheckCriterion, ChoiceCriterion, Criterion, NoulCriterion, ScoreCriterion
from judgelab.evaluators._decompose import DecompositionPlan, SentenceCheck, plan_checks
from judgelab.evaluators._detail import JudgmentDetail, judgment_detail
from judgelab.evaluators._ensembles import build_cascade, load_stage_models
from judgelab.evaluators._evidence import content_words, evidence_windows
from judgelab.evaluators._fence import FENCED_FACT_CHECK_TEMPLATE, FENCED_RELEVANCY_TEMPLATE, fenced
from judgelab.evaluators._identity import EvaluatorIdentity, config_hash, evaluator_identity
from judgelab.evaluators._policy import (
    CASCADE_METHOD,
    LTT_CITATION,
    POLICY_METHOD,
    Band,
    CascadePolicy,
    CascadeStage,
    JudgeIdentity,
    Policy,
    Stage,
    cascade_decisions,
    check_judge,
    load_cascade,
    load_policy,
    one_stage_name,
)
from judgelab.evaluators._policy_figures import FitFigures, HeldoutCascade, HeldoutFigures, HeldoutPolicy, IntervalRecord, Num
from judgelab.evaluators._registry import (
    EvaluatorName,
    RegisteredEvaluator,
    build_evaluator,
    default_evaluator_name,
    evaluator_config,
    evaluator_names,
    evaluator_tasks,
    register_evaluator,
    register_evaluator_class,
    registered_as,
    registered_evaluator,
)
from judgelab.evaluators._rubric_presets import RUBRIC_PRESETS, Rubric, RubricItem
from judgelab.evaluators._spi import BaseEvaluator, Document, EvaluationRequest, EvaluationResponse, Evaluator, evaluate_many
from judgelab.evaluators._template_config import TemplateConfig
from judgelab.evaluators._verdict import Finding, Outcome, Verdict
from judgelab.evaluators._yesno import DecisionPolicy, ScoreCalibrator, YesNoEvaluator, YesNoParameters
from judgelab.evaluators.cascade import Cascade, CascadeBand
from judgelab.evaluators.criteria import CriteriaEvaluator, request_state, verdict_score
from judgelab.evaluators.criteria_judge import CriteriaJudge, CriteriaJudgeBuilder, make_state
from judgelab.evaluators.fact_checking import (
    BESPOKE_FACT_CHECK_TEMPLATE,
    DEFAULT_FACT_CHECK_TEMPLATE,
    MINICHECK_SYSTEM_PROMPT,
    FactCheckingEvaluator,
    FactCheckingParameters,
)
from judgelab.evaluators.jury import COMBINE_RULES, Jury, combine_scores
from judgelab.evaluators.relevancy import DEFAULT_RELEVANCY_TEMPLATE, RelevancyEvaluator
from judgelab.evaluators.rubric import RUBRIC_TEMPLATE, RUBRIC_TEMPLATE_NO_INPUTS, RubricEvaluator
from judgelab.evaluators.self_refine import Attempt, RefineResult, SelfRefine

__all__ = [
    "FitFigures",
    "HeldoutCascade",
    "HeldoutFigures",
    "HeldoutPolicy",
    "IntervalRecord",
    "Num",
    "chunk_text",
    "content_words",
    "evidence_windows",
    "DecompositionPlan",
    "SentenceCheck",
    "plan_checks",
    "split_sentences",
    "Attempt",
    "COMBINE_RULES",
    "CASCADE_METHOD",
    "Band",
    "Cascade",
    "CascadeBand",
    "CascadePolicy",
    "CascadeStage",
    "JudgeIdentity",
    "LTT_CITATION",
    "POLICY_METHOD",
    "Policy",
    "Stage",
    "cascade_decisions",
    "check_judge",
    "load_cascade",
    "load_policy",
    "one_stage_name",
    "Jury",
    "build_cascade",
    "combine_scores",
    "load_stage_models",
    "BESPOKE_FACT_CHECK_TEMPLATE",
    "BaseEvaluator",
    "ScoreCalibrator",
    "CheckCriterion",
    "DecisionPolicy",
    "EvaluatorName",
    "ChoiceCriterion",
    "CriteriaEvaluator",
    "CriteriaJudge",
    "CriteriaJudgeBuilder",
    "Criterion",
    "DEFAULT_FACT_CHECK_TEMPLATE",
    "DEFAULT_RELEVANCY_TEMPLATE",
    "Document",
    "EvaluationRequest",
    "EvaluationResponse",
    "Evaluator",
    "EvaluatorIdentity",
    "FENCED_FACT_CHECK_TEMPLATE",
    "FENCED_RELEVANCY_TEMPLATE",
    "FactCheckingEvaluator",
    "FactCheckingParameters",
    "Finding",
    "JudgmentDetail",
    "MINICHECK_SYSTEM_PROMPT",
    "NoulCriterion",
    "Outcome",
    "RUBRIC_PRESETS",
    "RUBRIC_TEMPLATE",
    "RUBRIC_TEMPLATE_NO_INPUTS",
    "RefineResult",
    "RegisteredEvaluator",
    "RelevancyEvaluator",
    "Rubric",
    "RubricEvaluator",
    "RubricItem",
    "ScoreCriterion",
    "SelfRefine",
    "TemplateConfig",
    "Verdict",
    "YesNoEvaluator",
    "YesNoParameters",
    "BUILTIN_EVALUATORS",
    "build_evaluator",
    "default_evaluator_name",
    "evaluate_many",
    "evaluator_config",
    "evaluator_names",
    "evaluator_tasks",
    "config_hash",
    "evaluator_identity",
    "judgment_detail",
    "fenced",
    "make_state",
    "register_evaluator",
    "register_evaluator_class",
    "registered_as",
    "registered_evaluator",
    "request_state",
    "verdict_score",
]
