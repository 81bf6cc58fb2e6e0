"""What a Learn-then-Test fit found, for a policy (one band) and a cascade (one band per stage) alike."""

from __future__ import annotations

import math
from dataclasses import dataclass

from judgelab.errors import ParameterError
from judgelab.evaluators import Band

__all__ = ["CascadeFit", "PolicyFit"]


@dataclass(frozen=True)
class PolicyFit:
    """The bands a fit chose and the numbers behind them.

    ``coverage``, ``risk_value`` (the risk controlled), ``error`` and, for a
    cascade, ``cost`` (stage cost per row, abstentions not priced) and
    ``decided_share`` (per stage) are on all calibration rows. A fit that
    certified nothing is not ``feasible``: its bands decide nothing, and
    ``rows_needed`` / ``units_needed`` forecast what would (``None``: more
    rows will not help; ``note`` says why).
    """

    bands: tuple[Band, ...]
    feasible: bool
    n: int
    n_units: int
    unit_size: int
    n_testing_units: int
    n_candidates: int
    n_rejected: int
    coverage: float
    risk_value: float
    error: float
    rows_needed: int | None
    units_needed: int | None
    note: str
    cost: float | None = None
    decided_share: tuple[float, ...] = ()

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

    def calibration(self) -> dict[str, object]:
        """The fit's numbers as a policy file keeps them (``Policy.calibration``)."""
        def num(x: float) -> float | None:
            return None if isinstance(x, float) and math.isnan(x) else x

        head: dict[str, object] = {"coverage": self.coverage}
        if self.cost is None:
            head.update(risk=num(self.risk_value), error=num(self.error))
        else:
            head.update(error=num(self.error), cost=self.cost, decided_share=list(self.decided_share))
        return {**head, "testing_units": self.n_testing_units, "candidates": self.n_candidates,
                "certified": self.n_rejected}


CascadeFit = PolicyFit
"""The fit of a cascade: the one fit type (earlier judgelab's name for it)."""
