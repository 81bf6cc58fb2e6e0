"""One task's entry of ``metrics.json``, typed field by field (``TaskMetrics`` and its parts).

``analyze`` produces these (``Analysis.metrics()``); the report writes them,
and the commands that read a run (``policy``, ``gate``, ``compare``,
``estimate``, ``cascade``, ``jury``) read them back through ``read_metrics``.

A figure that is undefined on the data (nan) is written as JSON ``null`` and
read back as ``None`` (the ``Num`` fields). The shipped threshold and the
agreement threshold are written as computed (a nan threshold is JSON's
``NaN``), as judgelab always wrote them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from judgelab.evaluators import IntervalRecord, Num

__all__ = [
    "AbstainBandRecord",
    "AbstainBands",
    "AgreementRecord",
    "CalibrationRecord",
    "CalibratorChoiceRecord",
    "CalibratorRecord",
    "CriterionMinimum",
    "GeneratorStatsRecord",
    "IntervalRecord",
    "LengthBiasRecord",
    "Num",
    "RowCounts",
    "SelfPreferenceRecord",
    "TaskMetrics",
    "TaskThreshold",
]


class _Record(BaseModel):
    """A frozen part of a run file; a key it does not declare is an error, not silently kept."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RowCounts(_Record):
    """How many rows the task had, how many were scored, how many failed."""

    total: int
    scored: int
    errors: int


class TaskThreshold(_Record):
    """The shipped threshold of a task and how it was chosen and measured."""

    value: float
    strategy: str
    calibrated_value: Num = None
    mode: Literal["split", "cv", "in-sample"] | None = None
    note: str | None = None
    n_tuning: int | None = None
    n_heldout: int | None = None


class AbstainBandRecord(_Record):
    """An abstain band: fail below ``low``, pass at or above ``high``, escalate in between."""

    low: Num
    high: Num
    coverage: Num
    error: Num
    target_error: float


class AbstainBands(_Record):
    """The band tuned on the tuning rows and the band as measured on the held-out rows."""

    tuned: AbstainBandRecord
    heldout: AbstainBandRecord


class CalibrationRecord(_Record):
    """ECE and Brier score before and after one calibrator, on the held-out rows."""

    n: int
    ece_before: Num
    ece_after: Num
    ece_equal_mass_before: Num
    ece_equal_mass_after: Num
    brier_before: Num
    brier_after: Num


class CalibratorRecord(_Record):
    """The shipped calibrator's fitted state (the content of ``calibrator-TASK.json``)."""

    format: str
    version: int
    kind: str
    n_fit: int
    params: dict[str, float | list[float]]


class CalibratorChoiceRecord(_Record):
    """Which calibrator was shipped, which was asked for, and why."""

    shipped: str
    requested: str
    reason: str
    cv_ece: dict[str, Num]
    replaced_by_raw: bool


class GeneratorStatsRecord(_Record):
    """Pass rates of one generator's responses (or of all self / all other ones)."""

    generator: str
    is_self: bool
    n: int
    n_pos: int
    n_neg: int
    pass_rate: Num
    pass_rate_pos: Num
    pass_rate_neg: Num


class SelfPreferenceRecord(_Record):
    """Self-preference: the pass-rate gaps between the judge's own family and the others."""

    patterns: list[str]
    measurable: bool
    message: str
    gap_pos: IntervalRecord
    gap_neg: IntervalRecord
    p_value_pos: Num
    p_value_neg: Num
    self: GeneratorStatsRecord
    other: GeneratorStatsRecord
    by_generator: list[GeneratorStatsRecord]
    n_unknown_generator: int


class AgreementRecord(_Record):
    """Cohen's kappa, TPR and TNR of the verdicts at a threshold, with intervals."""

    rows: str
    n: int
    n_label_1: int
    n_label_0: int
    threshold: float
    cohen_kappa: IntervalRecord
    tpr: IntervalRecord
    tnr: IntervalRecord


class LengthBiasRecord(_Record):
    """Spearman's rho of score and judged-text length per label (keys ``"1"`` and ``"0"``)."""

    spearman_by_label: dict[str, IntervalRecord]
    rows_by_label: dict[str, int]
    median_chars_by_label: dict[str, Num]
    rows_without_length: int
    moves_with_length: bool
    verdict: str


class CriterionMinimum(_Record):
    """One criterion's minimum score, chosen on rows with per-criterion labels."""

    minimum: float
    n: int
    n_pos: int
    balanced_accuracy_in_sample: Num


class TaskMetrics(_Record):
    """One task's figures in ``metrics.json``: every key a typed field.

    ``threshold`` is the only part every version had; the rest is absent from
    files written before it existed (``None`` then). ``policy`` is the task's
    ``policy.json`` without its creation time (``load_policy`` validates it).
    """

    task: str | None = None
    threshold: TaskThreshold
    headline: str | None = None
    chance_note: str | None = None
    rows: RowCounts | None = None
    heldout: dict[str, IntervalRecord] | None = None
    heldout_by_group: dict[str, dict[str, IntervalRecord]] | None = None
    in_sample_at_threshold: dict[str, Num] | None = None
    abstain_band: AbstainBands | None = None
    calibration: dict[str, CalibrationRecord] | None = None
    calibrator: CalibratorRecord | None = None
    calibrator_choice: CalibratorChoiceRecord | None = None
    self_preference: SelfPreferenceRecord | None = None
    criteria: dict[str, CriterionMinimum] | None = None
    warnings: list[str] | None = None
    agreement: AgreementRecord | None = None
    length_bias: LengthBiasRecord | None = None
    calibrator_file: str | None = None
    policy: dict[str, Any] | None = None

    @property
    def shipped_calibrator(self) -> str:
        """The calibrator shipped (``"raw"``: none), from ``calibrator_choice`` or, in older files, ``calibrator``."""
        if self.calibrator_choice is not None:
            return self.calibrator_choice.shipped
        return self.calibrator.kind if self.calibrator is not None else "raw"
