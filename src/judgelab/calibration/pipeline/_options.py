"""``CalibrationOptions``: how ``calibrate`` and ``analyze_run`` choose rows, thresholds and intervals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from judgelab.calibration.analysis import check_calibrator_name, parse_strategy
from judgelab.errors import check_parameter

__all__ = ["CalibrationOptions"]


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass(frozen=True)
class CalibrationOptions:
    """The options of a calibration run: ``calibrate(..., options=CalibrationOptions(limit=24))``.

    Attributes
    ----------
    threshold_strategy
        See ``parse_strategy``.
    calibrator
        Calibrator to ship: ``auto`` (default: the lowest cross-validated
        ECE on the tuning rows, ties to the simpler), ``raw`` (none),
        ``temperature``, ``platt`` or ``isotonic``; one that makes the
        held-out ECE worse than raw is replaced by raw (see ``analyze``).
    self_generators
        fnmatch patterns of the judge's own family; ``None``: the model spec's
        ``self_generators``.
    target_error
        Target error among decided rows for the abstain band (and the policy's alpha).
    limit
        Score at most ``limit`` rows of each task (after filtering): whole
        units spread over the set, both labels, seeded by ``seed``
        (``spread_limit``), never the first rows.
    skip_invalid
        Skip malformed rows of a JSONL set instead of stopping.
    batch_size, k_folds, n_resamples, seed, progress, figures
        Scoring batch size, CV folds, bootstrap size and seed, progress bar
        and plots.
    allow_partial
        Publish figures from a run in which rows failed (headlines then say
        "on N of M rows"); by default such a run raises ``PartialRunError``
        and writes no headline, threshold, calibrator or policy
        (``check_publishable``).
    corrections
        A ``corrections.jsonl`` (``apply_corrections``) whose label corrections
        are applied to the set's rows before scoring; recorded in metrics.json.
    report
        False stops before metrics.json and the report: ``CalibrationResult.write_report``
        writes them once, later, with its caller's sections (``stress`` adds Robustness so).
    """

    threshold_strategy: str = "balanced_accuracy"
    calibrator: str = "auto"
    self_generators: Sequence[str] | None = None
    target_error: float = 0.1
    limit: int | None = None
    skip_invalid: bool = False
    batch_size: int = 8
    k_folds: int = 5
    n_resamples: int = 1000
    seed: int | None = 0
    progress: bool = True
    figures: bool = True
    allow_partial: bool = False
    corrections: str | Path | None = None
    report: bool = True

    def check(self, where: str = "calibrate") -> None:
        """Reject bad options before any row is read, scored or a model loaded."""
        parse_strategy(self.threshold_strategy)
        check_calibrator_name(self.calibrator)
        check_parameter(isinstance(self.target_error, (int, float)) and 0 < self.target_error < 1,
                        "target_error", where, "a number between 0 and 1 (exclusive)", self.target_error)
        check_parameter(self.limit is None or (_whole(self.limit) and self.limit >= 1), "limit", where,
                        "None or an int >= 1", self.limit)
        check_parameter(_whole(self.batch_size) and self.batch_size >= 1, "batch_size", where, "an int >= 1",
                        self.batch_size)
        check_parameter(_whole(self.k_folds) and self.k_folds >= 2, "k_folds", where, "an int >= 2", self.k_folds)
        check_parameter(_whole(self.n_resamples) and self.n_resamples >= 1, "n_resamples", where, "an int >= 1",
                        self.n_resamples)
