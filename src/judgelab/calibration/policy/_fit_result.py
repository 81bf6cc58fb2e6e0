"""What a Learn-then-Test fit found, for a policy (one band) and a cascade (one band per stage) alike."""

from __future__ import annotations

import math
from dataclasses import dataclass

from judgelab.errors import ParameterError
from judgelab.evaluators import Band, FitFigures

__all__ = ["CascadeFit", "PolicyFit", "cascade_figures", "policy_figures"]


@dataclass(frozen=True)
class PolicyFit:
    """The bands a fit chose and the numbers behind them.

    ``calibration`` is what the policy file keeps of the fit (``Policy.calibration``,
    a ``FitFigures``): on all calibration rows, ``coverage``, ``risk`` (the risk
    controlled; a policy's) and ``error``, for a cascade ``cost`` (stage cost
    per row, abstentions not priced) and ``decided_share`` (per stage), and
    how many units tested (``testing_units``), candidates and certified ones.
    A fit that certified nothing is not ``feasible``: its bands decide
    nothing, and ``rows_needed`` / ``units_needed`` forecast what would
    (``None``: more rows will not help; ``note`` says why).
    """

    bands: tuple[Band, ...]
    feasible: bool
    n: int
    n_units: int
    unit_size: int
    calibration: FitFigures
    rows_needed: int | None
    units_needed: int | None
    note: str

    @property
    def band(self) -> Band:
        """The one band of a one-stage fit."""
        if len(self.bands) != 1:
            raise ParameterError(f"This fit has {len(self.bands)} bands (a cascade); read fit.bands.")
        return self.bands[0]

    @property
    def lower(self) -> float | None:
        """The one band's FAIL threshold."""
        return self.band.lower

    @property
    def upper(self) -> float | None:
        """The one band's PASS threshold."""
        return self.band.upper

    @property
    def coverage(self) -> float:
        """The share of calibration rows the bands decide (``calibration.coverage``)."""
        return math.nan if self.calibration.coverage is None else self.calibration.coverage

    @property
    def cost(self) -> float | None:
        """A cascade's stage cost per row (``calibration.cost``; ``None`` for a policy)."""
        return self.calibration.cost

    @property
    def decided_share(self) -> tuple[float, ...]:
        """A cascade's share of rows each stage decides (``calibration.decided_share``; empty for a policy)."""
        return tuple(self.calibration.decided_share or ())


def policy_figures(*, coverage: float, risk: float, error: float, testing_units: int, candidates: int,
                   certified: int) -> FitFigures:
    """A one-stage fit's ``FitFigures``: coverage, risk and error, then what was tested."""
    return FitFigures(coverage=coverage, risk=risk, error=error, testing_units=testing_units, candidates=candidates,
                      certified=certified)


def cascade_figures(*, coverage: float, error: float, cost: float, decided_share: tuple[float, ...], testing_units: int,
                    candidates: int, certified: int) -> FitFigures:
    """A cascade fit's ``FitFigures``: coverage, error, cost and each stage's share, then what was tested."""
    return FitFigures(coverage=coverage, error=error, cost=cost, decided_share=list(decided_share),
                      testing_units=testing_units, candidates=candidates, certified=certified)


CascadeFit = PolicyFit
"""The fit of a cascade: the one fit type (earlier judgelab's name for it)."""
