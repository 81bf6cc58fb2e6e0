"""One task's entry of ``metrics.json``, typed field by field (``TaskMetrics`` and its parts).

Each statistic returns its record from here (``agreement`` an
``AgreementRecord``, ``self_preference`` a ``SelfPreferenceRecord``...), under
the names the file keeps: the one shape of a measurement, from the analysis
to the disk to the report. ``analyze`` gathers them into a ``TaskMetrics``;
the report writes it, and the commands that read a run (``policy``,
``gate``, ``compare``, ``estimate``, ``cascade``, ``jury``) read it back
through ``read_metrics``.

An interval field takes an ``Interval`` (its estimate, low and high; nan
as ``None``) as well as an ``IntervalRecord`` or its mapping.

A figure that is undefined on the data (nan) is written as JSON ``null`` and
read back as ``None`` (the ``Num`` fields). The shipped threshold and the
agreement threshold are written as computed (a nan threshold is JSON's
``NaN``), as judgelab always wrote them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, field_serializer

from judgelab.evaluators import IntervalRecord, Num, Policy

__all__ = [
    "AbstainBandRecord",
    "AbstainBands",
    "AgreementRecord",
    "CalibrationRecord",
    "CalibratorChoiceRecord",
    "CalibratorRecord",
    "CriterionMinimum",
    "GeneratorStatsRecord",
    "IntervalField",
    "IntervalRecord",
    "LengthBiasRecord",
    "Num",
    "RowCounts",
    "SelfPreferenceRecord",
    "TaskMetrics",
    "TaskThreshold",
]


def _interval_numbers(value: object) -> object:
    """An object with ``estimate``, ``low`` and ``high`` (an ``Interval``) as those three numbers; else unchanged."""
    keys = ("estimate", "low", "high")
    if isinstance(value, (BaseModel, Mapping)) or not all(hasattr(value, k) for k in keys):
        return value
    return {k: getattr(value, k) for k in keys}


#: An interval as run files keep it: an ``IntervalRecord``, validated from one, its mapping or an ``Interval``.
IntervalField = Annotated[IntervalRecord, BeforeValidator(_interval_numbers)]


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
    """An abstain band: fail below ``low``, pass at or above ``high``, escalate in between (``abstain_band`` returns it)."""

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
    """Which calibrator was shipped, which was asked for, and why (``choose_calibrator`` returns it).

    ``shipped`` is ``raw`` (none), ``temperature``, ``platt`` or ``isotonic``;
    ``requested`` is ``auto`` or the name asked for; ``reason`` one sentence
    for the report; ``cv_ece`` each candidate's ECE cross-validated on the
    tuning rows (``auto`` only); ``replaced_by_raw`` when the calibrator asked
    for or picked made the held-out ECE worse and raw scores are shipped.
    """

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
    gap_pos: IntervalField
    gap_neg: IntervalField
    p_value_pos: Num
    p_value_neg: Num
    self: GeneratorStatsRecord
    other: GeneratorStatsRecord
    by_generator: list[GeneratorStatsRecord]
    n_unknown_generator: int


class AgreementRecord(_Record):
    """Agreement of a judge's verdicts with the labels, with 95% bootstrap intervals (``agreement`` returns it).

    ``cohen_kappa`` is Cohen's kappa, ``tpr`` the share of the ``n_label_1``
    rows labelled 1 that pass, ``tnr`` the share of the ``n_label_0`` rows
    labelled 0 that fail; ``rows`` says which rows (``"held-out"``, ``"all"``)
    and ``threshold`` at which threshold (the median of per-row ones).
    """

    rows: str
    n: int
    n_label_1: int
    n_label_0: int
    threshold: float
    cohen_kappa: IntervalField
    tpr: IntervalField
    tnr: IntervalField


class LengthBiasRecord(_Record):
    """Does the score move with the judged text's length? (``length_bias`` returns it.)

    Per label (keys ``"1"`` and ``"0"``): Spearman's rho of score and length
    with a 95% bootstrap interval (undefined with fewer than 5 rows of the
    label, or one length or score only), the row count and the median length
    in characters; ``moves_with_length`` when any interval excludes 0, and
    ``verdict``, the finding in one sentence.
    """

    spearman_by_label: dict[str, IntervalField]
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
    ``Policy`` (``policy.json``), written without its creation time (which
    reads back as ``""``) so that a rerun writes the same file.
    """

    task: str | None = None
    threshold: TaskThreshold
    headline: str | None = None
    chance_note: str | None = None
    rows: RowCounts | None = None
    heldout: dict[str, IntervalField] | None = None
    heldout_by_group: dict[str, dict[str, IntervalField]] | None = None
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
    policy: Policy | None = None

    @field_serializer("policy")
    def _policy_without_creation_time(self, policy: Policy | None) -> dict[str, object] | None:
        """The policy as ``policy.json`` lays it out, every field but ``created``."""
        return None if policy is None else policy.model_dump(exclude={"created"})

    @property
    def shipped_calibrator(self) -> str:
        """The calibrator shipped (``"raw"``: none), from ``calibrator_choice`` or, in older files, ``calibrator``."""
        if self.calibrator_choice is not None:
            return self.calibrator_choice.shipped
        return self.calibrator.kind if self.calibrator is not None else "raw"
