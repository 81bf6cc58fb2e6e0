"""An ``Analysis`` as the typed ``TaskMetrics`` of ``metrics.json`` (what the run file keeps of it).

Each part of an analysis (an interval, a band, the calibrator choice, the
self-preference, agreement and length-bias measurements) becomes its typed
record here; pydantic turns an undefined figure (nan) into ``None``, written
as JSON null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from judgelab.calibration.data import (
    AbstainBandRecord,
    AbstainBands,
    AgreementRecord,
    CalibrationRecord,
    CalibratorChoiceRecord,
    CalibratorRecord,
    CriterionMinimum,
    GeneratorStatsRecord,
    IntervalRecord,
    LengthBiasRecord,
    RowCounts,
    SelfPreferenceRecord,
    TaskMetrics,
    TaskThreshold,
)

if TYPE_CHECKING:
    from judgelab.calibration.analysis._agreement import Agreement, LengthBias
    from judgelab.calibration.analysis._analysis import Analysis
    from judgelab.calibration.analysis._bootstrap import Interval
    from judgelab.calibration.analysis._calibrator_choice import CalibratorChoice
    from judgelab.calibration.analysis._selfpref import SelfPreference

__all__ = ["agreement_record", "analysis_record", "interval_record", "length_bias_record", "self_preference_record"]


def interval_record(iv: Interval) -> IntervalRecord:
    """An ``Interval`` as written in a run file (estimate, low, high)."""
    return IntervalRecord.model_validate(iv, from_attributes=True)


def agreement_record(ag: Agreement) -> AgreementRecord:
    """Cohen's kappa, TPR and TNR at a threshold, as written in a run file."""
    return AgreementRecord(rows=ag.rows, n=ag.n, n_label_1=ag.n_pos, n_label_0=ag.n_neg, threshold=ag.threshold,
                           cohen_kappa=interval_record(ag.kappa), tpr=interval_record(ag.tpr),
                           tnr=interval_record(ag.tnr))


def length_bias_record(lb: LengthBias) -> LengthBiasRecord:
    """Spearman's rho of score and length per label, as written in a run file (labels as string keys)."""
    return LengthBiasRecord(
        spearman_by_label={str(k): interval_record(v) for k, v in lb.rho.items()},
        rows_by_label={str(k): v for k, v in lb.n.items()},
        median_chars_by_label={str(k): v for k, v in lb.median_chars.items()},
        rows_without_length=lb.n_missing, moves_with_length=lb.moves_with_length, verdict=lb.verdict(),
    )


def self_preference_record(sp: SelfPreference) -> SelfPreferenceRecord:
    """The self-preference measurement as written in a run file."""
    def stats(s: object) -> GeneratorStatsRecord:
        return GeneratorStatsRecord.model_validate(s, from_attributes=True)

    return SelfPreferenceRecord(
        patterns=list(sp.patterns), measurable=sp.measurable, message=sp.message,
        gap_pos=interval_record(sp.gap_pos), gap_neg=interval_record(sp.gap_neg),
        p_value_pos=sp.p_value_pos, p_value_neg=sp.p_value_neg, self=stats(sp.self_stats),
        other=stats(sp.other_stats), by_generator=[stats(s) for s in sp.by_generator],
        n_unknown_generator=sp.n_unknown,
    )


def _choice_record(c: CalibratorChoice) -> CalibratorChoiceRecord:
    return CalibratorChoiceRecord(shipped=c.kind, requested=c.requested, reason=c.reason, cv_ece=dict(c.cv_ece),
                                  replaced_by_raw=c.guarded)


def analysis_record(a: Analysis) -> TaskMetrics:
    """What ``metrics.json`` keeps of one task's analysis.

    ``warnings``, ``agreement`` and ``length_bias`` are set only when there
    are some (so they are written only then); every other field is always
    written, ``null`` when there is nothing.
    """
    optional = {
        **({"warnings": list(a.notes)} if a.notes else {}),
        **({"agreement": agreement_record(a.agreement)} if a.agreement is not None else {}),
        **({"length_bias": length_bias_record(a.length_bias)} if a.length_bias is not None else {}),
    }
    return TaskMetrics(
        task=a.task, headline=a.headline(), chance_note=a.chance_note(),
        rows=RowCounts(total=a.n_rows, scored=a.n_scored, errors=a.n_errors),
        threshold=TaskThreshold(value=a.threshold, calibrated_value=a.threshold_calibrated, strategy=a.strategy,
                                mode=a.mode, note=a.mode_note, n_tuning=a.n_tuning, n_heldout=a.n_heldout),
        heldout={k: interval_record(v) for k, v in a.heldout.items()},
        heldout_by_group={g: {k: interval_record(v) for k, v in m.items()} for g, m in a.heldout_by_group.items()},
        in_sample_at_threshold=dict(a.in_sample),
        abstain_band=AbstainBands(tuned=AbstainBandRecord.model_validate(a.abstain, from_attributes=True),
                                  heldout=AbstainBandRecord.model_validate(a.abstain_heldout, from_attributes=True)),
        calibration={k: CalibrationRecord.model_validate(v) for k, v in a.calibration.items()},
        calibrator=CalibratorRecord.model_validate(a.calibrator.to_dict()) if a.calibrator is not None else None,
        calibrator_choice=_choice_record(a.calibrator_choice) if a.calibrator_choice is not None else None,
        self_preference=self_preference_record(a.self_pref) if a.self_pref is not None else None,
        criteria={k: CriterionMinimum.model_validate(v) for k, v in a.criteria.items()},
        **optional,
    )
