"""What a policy file records about its fit and its held-out check, typed (``Policy.calibration``, ``.heldout``).

The files keep the layout judgelab always wrote: an interval is
``{"estimate", "low", "high"}`` followed by its text (``coverage_text``:
``"0.812 [0.774, 0.850]"``), a cascade's stage shares are ``stage_1``,
``stage_2``... The text is rendered from the interval when the file is
written and dropped when it is read: the model holds the numbers only.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, SerializerFunctionWrapHandler, model_serializer, model_validator

__all__ = ["FitFigures", "HeldoutFigures", "HeldoutPolicy", "HeldoutCascade", "IntervalRecord", "Num"]


def _nan_to_none(value: object) -> object:
    """``None`` for a float nan (JSON has no nan; judgelab writes null), else the value unchanged."""
    return None if isinstance(value, float) and math.isnan(value) else value


#: A figure that may be undefined: a float, or ``None`` where it is nan (written as JSON null).
Num = Annotated[float | None, BeforeValidator(_nan_to_none)]


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IntervalRecord(_Figures):
    """A point estimate with its 95% bootstrap interval, as run and policy files keep it (no confidence level)."""

    estimate: Num
    low: Num
    high: Num

    def __format__(self, spec: str) -> str:
        """``0.812 [0.774, 0.850]`` (``spec`` for each number, ``.3f`` by default); ``n/a`` when undefined."""
        spec = spec or ".3f"
        if self.estimate is None:
            return "n/a"
        if self.low is None or self.high is None:
            return f"{self.estimate:{spec}} [n/a]"
        return f"{self.estimate:{spec}} [{self.low:{spec}}, {self.high:{spec}}]"

    def __str__(self) -> str:
        return format(self)


class _Written(_Figures):
    """Figures written with only the keys that were set (a policy's and a cascade's differ), in field order."""

    @model_serializer(mode="wrap")
    def _only_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}


class FitFigures(_Written):
    """What the fit measured on its own rows (``Policy.calibration``): coverage, risk or cost, how many tested."""

    coverage: float | None = None  # as computed (a nan stays nan in metrics.json, as always)
    risk: Num = None
    error: Num = None
    cost: float | None = None
    decided_share: list[float] | None = None
    testing_units: int | None = None
    candidates: int | None = None
    certified: int | None = None


_INTERVALS = ("coverage", "risk", "error", "cost")


class HeldoutFigures(_Written):
    """One system's figures on rows it was not fitted on, with intervals over whole units."""

    n: int
    decided: int
    coverage: IntervalRecord
    risk: IntervalRecord | None = None
    error: IntervalRecord
    cost: IntervalRecord | None = None
    stage_shares: list[IntervalRecord] | None = None
    """The share of rows each stage decides (a cascade's; ``stage_1``, ``stage_2``... in the file)."""

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any) -> Any:
        """Drop the rendered texts, gather ``stage_K`` into ``stage_shares``."""
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if not k.endswith("_text")}
        stages = sorted((k for k in data if k.startswith("stage_") and k[6:].isdigit()), key=lambda k: int(k[6:]))
        if stages:
            data["stage_shares"] = [data.pop(k) for k in stages]
        return data

    @model_serializer(mode="wrap")
    def _only_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """Each interval followed by its text, as judgelab always wrote them (``mode`` first, when there is one)."""
        data = {k: v for k, v in handler(self).items() if k in self.model_fields_set}
        out: dict[str, object] = {}
        for k, v in data.items():
            if k == "stage_shares":
                for i, share in enumerate(self.stage_shares or ()):
                    out[f"stage_{i + 1}"], out[f"stage_{i + 1}_text"] = v[i], format(share)
                continue
            out[k] = v
            if k in _INTERVALS and getattr(self, k) is not None:
                out[f"{k}_text"] = format(getattr(self, k))
        return {**({"mode": out.pop("mode")} if "mode" in out else {}), **out}


class HeldoutPolicy(HeldoutFigures):
    """A two-threshold policy on held-out rows: how they were held out (``mode``), then its figures."""

    mode: str


class HeldoutCascade(_Figures):
    """A cascade and each of its stages alone on held-out rows (``systems``: ``"cascade"``, ``"NAME alone"``)."""

    mode: str
    n: int
    systems: dict[str, HeldoutFigures]
