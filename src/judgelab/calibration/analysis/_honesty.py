"""Whether a run may publish figures, and whether an interval can vary: decided here, once.

Every command and report asks these functions; none decides for itself.

- A run in which rows failed (an error record, or no record at all because
  scoring stopped) is *partial*. ``run_completeness`` counts it;
  ``check_publishable`` raises ``PartialRunError`` (the CLI exits 3) unless
  the caller allows partial runs, and then every headline says
  ``"on N of M rows"`` (``RunCompleteness.scope``).
- A bootstrap interval over fewer than ``MIN_INTERVAL_UNITS`` resampling
  units (``LabelledRow.unit``: rows sharing ``meta["pair"]`` are one unit),
  or one with zero width (every resample gave the same value), cannot show
  how the figure would vary on other data. ``interval_warning`` says so,
  naming the units.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from judgelab.calibration.data import ScoreRecord
from judgelab.errors import PartialRunError

__all__ = [
    "MIN_INTERVAL_UNITS",
    "RunCompleteness",
    "check_publishable",
    "interval_warning",
    "run_completeness",
]

#: Fewer resampling units than this, and an interval is printed with a warning: a bootstrap over a
#: handful of units cannot show how the figure varies (with one unit, every resample is the same data).
MIN_INTERVAL_UNITS = 10


@dataclass(frozen=True)
class RunCompleteness:
    """How many of a run's rows have a score, and the first error of those that do not."""

    n_rows: int
    n_scored: int
    first_error: str = ""
    n_unscored: int = 0
    """Rows with no record at all (scoring stopped early, e.g. the judge server stopped answering)."""

    @property
    def n_failed(self) -> int:
        return self.n_rows - self.n_scored

    @property
    def complete(self) -> bool:
        return self.n_failed == 0

    @property
    def scope(self) -> str:
        """``""`` for a complete run, else ``"on N of M rows"`` (what a partial run's headline must say)."""
        return "" if self.complete else f"on {self.n_scored} of {self.n_rows} rows"

    def message(self, command: str = "the command") -> str:
        """The one line a partial run ends with: how many rows failed, why, and that the command resumes."""
        stopped = (f"; scoring stopped early with {self.n_unscored} row(s) never scored, because the judge "
                   "stopped answering" if self.n_unscored else "")
        why = f" (first error: {self.first_error})" if self.first_error else ""
        return (f"{self.n_failed} of {self.n_rows} rows failed{why}{stopped}. No headline, threshold, calibrator "
                f"or policy was written. Run the same {command} command again to resume (only the failed rows "
                f"are scored), or add --allow-partial to publish figures on the {self.n_scored} scored rows.")


def run_completeness(records: Iterable[ScoreRecord], n_rows: int | None = None) -> RunCompleteness:
    """Count a run's scored rows among ``n_rows`` (default: the records given).

    Parameters
    ----------
    records
        The run's records (a failed row has ``error`` set and no score).
    n_rows
        How many rows the run was asked to score; rows without any record
        (scoring stopped early) count as failed.
    """
    records = list(records)
    ok = sum(1 for r in records if r.ok)
    first = next((r.error for r in records if not r.ok and r.error), "")
    total = len(records) if n_rows is None else max(n_rows, len(records))
    return RunCompleteness(n_rows=total, n_scored=ok, first_error=_one_line(first or ""),
                           n_unscored=total - len(records))


def check_publishable(completeness: RunCompleteness, *, allow_partial: bool, command: str = "the") -> None:
    """Raise ``PartialRunError`` unless the run is complete or partial runs are allowed.

    Raises
    ------
    PartialRunError
        When rows failed and ``allow_partial`` is false; its message is the
        one line ``RunCompleteness.message`` writes.
    """
    if completeness.complete or allow_partial:
        return
    raise PartialRunError(completeness.message(command), n_failed=completeness.n_failed,
                          n_rows=completeness.n_rows, first_error=completeness.first_error,
                          stopped_early=bool(completeness.n_unscored))


def interval_warning(units: Iterable[object], intervals: Mapping[str, object] | None = None,
                     *, what: str = "intervals") -> str | None:
    """A warning when intervals over these units cannot vary; ``None`` when they can.

    Parameters
    ----------
    units
        The resampling unit of every row the intervals were computed from
        (``ScoreRecord.unit``).
    intervals
        ``{name: interval}`` (objects with ``low`` and ``high``); those of
        zero width are named.
    what
        What the intervals are, for the message (e.g. ``"flip-rate intervals"``).

    Returns
    -------
    str or None
        The warning, naming the units (the first few) and what to do.
    """
    distinct = list(dict.fromkeys(str(u) for u in units))
    if not distinct:
        return None
    if len(distinct) < MIN_INTERVAL_UNITS:
        shown = ", ".join(distinct[:3]) + (", ..." if len(distinct) > 3 else "")
        return (f"The {what} come from {len(distinct)} unit(s) ({shown}), fewer than {MIN_INTERVAL_UNITS}: "
                "rows of one unit (meta.pair) are resampled together, so these intervals cannot show how the "
                "figures vary on other data. Score rows from more units (--limit takes whole units spread over "
                "the set).")
    flat = sorted(name for name, iv in (intervals or {}).items() if _zero_width(iv))
    if flat:
        return (f"The {what} of {', '.join(flat)} have zero width over {len(distinct)} units: every bootstrap "
                "resample gave the same value, which does not mean the figure is exact; read them as point "
                "estimates.")
    return None


def _zero_width(iv: object) -> bool:
    low, high = getattr(iv, "low", math.nan), getattr(iv, "high", math.nan)
    try:
        return not (math.isnan(low) or math.isnan(high)) and low == high
    except TypeError:
        return False


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")
