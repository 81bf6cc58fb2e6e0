"""How a fitted cascade does on rows it was not fitted on, against each of its stages alone.

``heldout_cascade`` cross-fits over units: each fold's rows are decided by a
cascade fitted on the other folds (and, for comparison, by each stage alone
with its own Learn-then-Test band, at the same alpha, delta and abstain
cost). It reports coverage, error among decided rows, cost per row and the
share decided at each stage, with cluster-bootstrap intervals.
``write_cascade_report`` writes them as a table (``cascade.md``) and a
plot (``cascade.png``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.calibration.analysis import bootstrap_many
from judgelab.calibration.policy import CascadeFitOptions, cascade_decisions, fit_cascade_arrays
from judgelab.calibration.policy._cascade_policy import CascadePolicy, StageRows

__all__ = ["heldout_cascade", "write_cascade_report"]


def _folds(y: np.ndarray, units: np.ndarray, k: int, seed: int | None):
    from judgelab.calibration.analysis import group_folds as folds

    return folds(y, units, k, seed)


def _crossfit(s: np.ndarray, y: np.ndarray, units: np.ndarray, folds, options: CascadeFitOptions):
    dec = np.full(len(y), "", dtype=object)
    stage = np.full(len(y), -1, dtype=int)
    for test in folds:
        train = np.ones(len(y), dtype=bool)
        train[test] = False
        fit = fit_cascade_arrays(s[:, train], y[train], units[train], options)
        dec[test], stage[test] = cascade_decisions(fit.bands, s[:, test])
    return dec, stage


def _row_cost(stage: np.ndarray, decided: np.ndarray, costs: np.ndarray) -> np.ndarray:
    reached = np.ones(len(stage), dtype=bool)
    cost = np.zeros(len(stage))
    for k, c in enumerate(costs):
        cost += c * reached
        reached &= ~((stage == k) & decided)
    return cost


def _stats(dec, stage, y, units, costs, n_resamples, seed) -> dict[str, Any]:
    decided = dec != "abstain"
    wrong = (((dec == "pass") & (y == 0)) | ((dec == "fail") & (y == 1))).astype(float)
    cost = _row_cost(stage, decided, costs)
    K = len(costs)
    at = [((stage == k) & decided).astype(float) for k in range(K)]

    def stat(dec_, wrong_, cost_, *at_):
        n_dec = dec_.sum()
        out = {"coverage": dec_.mean(), "error": wrong_.sum() / n_dec if n_dec else math.nan, "cost": cost_.mean()}
        out.update({f"stage_{k + 1}": a.mean() for k, a in enumerate(at_)})
        return out

    ivs = bootstrap_many(stat, [decided.astype(float), wrong, cost, *at], n_resamples=n_resamples, seed=seed,
                         clusters=units if len(set(units)) < len(units) else None)
    out: dict[str, Any] = {"n": int(len(y)), "decided": int(decided.sum())}
    for k, iv in ivs.items():
        out[k] = iv.to_dict()
        out[f"{k}_text"] = format(iv)
    return out


def heldout_cascade(al: StageRows, policy: CascadePolicy, *, k_folds: int = 5, n_resamples: int = 1000) -> dict | None:
    """Cross-fitted coverage, error, cost and stage shares of the cascade and of each stage alone (None: too few units)."""
    folds = _folds(al.labels, al.units, k_folds, policy.seed)
    if folds is None:
        return None
    costs = np.array([s.cost for s in policy.stages])
    base = CascadeFitOptions(alpha=policy.alpha, delta=policy.delta, costs=tuple(costs),
                             abstain_cost=policy.abstain_cost, ordering_fraction=policy.ordering_fraction,
                             seed=policy.seed)
    systems: dict[str, Any] = {}
    dec, stage = _crossfit(al.scores, al.labels, al.units, folds, base)
    systems["cascade"] = _stats(dec, stage, al.labels, al.units, costs, n_resamples, policy.seed)
    for k, st in enumerate(policy.stages):
        one = replace(base, costs=(float(costs[k]),))
        dec, stage = _crossfit(al.scores[k:k + 1], al.labels, al.units, folds, one)
        systems[f"{st.name} alone"] = _stats(dec, stage, al.labels, al.units, costs[k:k + 1], n_resamples, policy.seed)
    return {"mode": f"{len(folds)}-fold cross-fitting over units", "n": int(len(al.labels)), "systems": systems}


def _table(policy: CascadePolicy, held: dict) -> list[str]:
    K = len(policy.stages)
    head = ["system", "coverage", "error among decided", f"cost per row ({policy.cost_unit})",
            *[f"decided by {s.name}" for s in policy.stages]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, st in held["systems"].items():
        shares = [st.get(f"stage_{k + 1}_text", "") for k in range(K)]
        if name != "cascade":
            shares = [st["stage_1_text"] if s.name + " alone" == name else "" for s in policy.stages]
        lines.append(f"| {name} | {st['coverage_text']} | {st['error_text']} | {st['cost_text']} | "
                     + " | ".join(shares) + " |")
    return lines


def _plot(held: dict, path: Path, policy: CascadePolicy) -> Path | None:
    from judgelab.calibration.report._plots import _plt

    plt = _plt()
    names = list(held["systems"])
    vals = [held["systems"][n] for n in names]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
    x = np.arange(len(names))
    a.bar(x, [v["cost"]["estimate"] or 0 for v in vals], color="#4c72b0")
    a.set_xticks(x, names, rotation=15, fontsize=8)
    a.set_ylabel(f"cost per row ({policy.cost_unit})")
    a.set_title("cost")
    cov = [v["coverage"]["estimate"] or 0 for v in vals]
    err = [v["error"]["estimate"] if v["error"]["estimate"] is not None else 0 for v in vals]
    b.bar(x - 0.2, cov, 0.4, label="coverage", color="#55a868")
    b.bar(x + 0.2, err, 0.4, label="error among decided", color="#c44e52")
    b.axhline(policy.alpha, ls="--", color="k", lw=1, label=f"alpha = {policy.alpha:g}")
    b.set_xticks(x, names, rotation=15, fontsize=8)
    b.set_ylim(0, 1)
    b.legend(fontsize=7)
    b.set_title(f"held-out ({held['mode']})")
    fig.tight_layout()
    fig.savefig(path, dpi=90, bbox_inches="tight")
    plt.close(fig)
    return path


def write_cascade_report(policy: CascadePolicy, held: dict | None, out: str | Path, *, figures: bool = True) -> Path:
    """Write ``cascade.md`` (and ``cascade.png``) in ``out``; returns the markdown's path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lines = [f"# Cascade: {' -> '.join(s.name for s in policy.stages)} ({policy.task})", "", policy.describe(), ""]
    lines += ["| stage | model | band (FAIL below, PASS at or above) | cost per row |", "|---|---|---|---|"]
    for s in policy.stages:
        band = f"{'-' if s.lower is None else f'{s.lower:.4f}'} / {'-' if s.upper is None else f'{s.upper:.4f}'}"
        lines.append(f"| {s.name} | {s.model or '?'} | {band} | {s.cost:.1f} |")
    if policy.rows_needed:
        lines += ["", f"Rows needed for a guarantee with coverage: about {policy.rows_needed} "
                      f"({policy.units_needed} units), against {policy.n} here."]
    if held:
        lines += ["", f"## Held-out ({held['mode']}, {held['n']} rows; 95% cluster-bootstrap intervals)", ""]
        lines += _table(policy, held)
        if figures:
            _plot(held, out / "cascade.png", policy)
            lines += ["", "![cascade](cascade.png)"]
    else:
        lines += ["", "Too few units for a held-out estimate."]
    path = out / "cascade.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
