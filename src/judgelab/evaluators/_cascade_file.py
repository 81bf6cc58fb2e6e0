"""``cascade.json``: a fitted cascade of judges, its stages, and its one validated reader.

``judgelab cascade fit`` (``judgelab.calibration.fit_cascade``) writes it;
``Cascade(stages, policy=load_cascade(path))`` and the ``cascade@FILE``
evaluator read it through ``load_cascade`` (a ``DataError`` naming the file
and field when it is not a cascade). ``CascadeStage`` is the one stage type:
who judges (spec and template hash), its band and its cost.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from judgelab.textfiles import load_json_model, save_json_model

__all__ = ["CASCADE_METHOD", "LTT_CITATION", "CascadePolicy", "CascadeStage", "load_cascade"]

CASCADE_METHOD = "learn-then-test/fixed-sequence over the joint cascade decision"
"""How a cascade's bands are fitted."""

LTT_CITATION = (
    "Angelopoulos, Bates, Candès, Jordan, Lei (2021). Learn then Test: Calibrating predictive "
    "algorithms to achieve risk control. arXiv:2110.01052"
)
"""The method behind policies and cascades."""

class CascadeStage(BaseModel):
    """One stage of a fitted cascade: who judges, its band and its cost per row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    model: str | None = None
    evaluator: str | None = None
    spec_hash: str | None = None
    template_hash: str | None = None
    lower: float | None = None
    upper: float | None = None
    cost: float = 1.0
    run: str | None = None


class CascadePolicy(BaseModel):
    """A fitted cascade, as saved in ``cascade.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    kind: Literal["cascade"] = "cascade"
    task: str
    stages: list[CascadeStage]
    alpha: float
    delta: float
    risk: Literal["error"] = "error"
    feasible: bool
    n: int
    n_units: int
    unit_size: int = 1
    method: str = CASCADE_METHOD
    citation: str = LTT_CITATION
    cost_unit: str = "prompt tokens"
    abstain_cost: float
    ordering_fraction: float = 0.3
    seed: int | None = 0
    set: str | None = None
    calibration: dict[str, Any] = {}
    heldout: dict[str, Any] | None = None
    rows_needed: int | None = None
    units_needed: int | None = None
    note: str = ""
    created: str = ""

    def bands(self) -> list[tuple[float | None, float | None]]:
        """``(lower, upper)`` of every stage, in order."""
        return [(s.lower, s.upper) for s in self.stages]

    def summary(self) -> dict[str, Any]:
        """What travels with every decision."""
        return {"kind": "cascade", "task": self.task, "alpha": self.alpha, "delta": self.delta, "n": self.n,
                "feasible": self.feasible, "stages": [s.name for s in self.stages], "bands": self.bands()}

    def describe(self) -> str:
        """One sentence for people."""
        names = " -> ".join(s.name for s in self.stages)
        if not self.feasible:
            return (f"No cascade {names} keeps the error among decided rows <= {self.alpha:g} (with probability "
                    f">= {1 - self.delta:g}) on these {self.n} rows: it abstains on every row. {self.note}")
        cal = self.calibration
        share = ", ".join(f"{s.name} {v * 100:.1f}%" for s, v in zip(self.stages, cal.get("decided_share", [])))
        return (f"Cascade {names}: error among decided rows <= {self.alpha:g} with probability >= {1 - self.delta:g} "
                f"({self.n} rows in {self.n_units} units); decides {cal.get('coverage', 0) * 100:.1f}% of the "
                f"calibration rows ({share}) at {cal.get('cost', math.nan):.1f} {self.cost_unit} per row.")

    def save(self, path: str | Path) -> Path:
        """Write ``cascade.json``; returns the path."""
        return save_json_model(self, path)


def load_cascade(path: str | Path) -> CascadePolicy:
    """Read a ``cascade.json`` written by ``judgelab cascade fit``.

    Raises
    ------
    DataError
        If the file cannot be read or is not a cascade.
    """
    return load_json_model(CascadePolicy, path, kind="cascade",
                           hint="Write one with 'judgelab cascade fit RUN_1 RUN_2 ...'.")
