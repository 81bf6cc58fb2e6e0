"""Stress figures from saved records: attack flip rates, the pooled flip rate, consistency checks."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis import Interval, bootstrap_many
from judgelab.calibration.data import LabelledRow, ScoreRecord
from judgelab.calibration.robustness._consistency import CHOICE_OPTIONS
from judgelab.calibration.robustness._metrics import AttackStats, ConsistencyStats, attack_stats, choice_stats, noul_stats, paraphrase_stats
from judgelab.calibration.robustness._perturb import Perturbation

__all__ = ["attack_table", "by_id", "consistency_table", "copies", "is_ok", "pooled_flip"]


def copies(rows: Sequence[LabelledRow], suffix: str) -> list[LabelledRow]:
    return [r.model_copy(update={"id": f"{r.id}~{suffix}"}) for r in rows]


def by_id(records: Sequence[ScoreRecord]) -> dict[str, ScoreRecord]:
    return {r.id: r for r in records}


def is_ok(rec: ScoreRecord | None) -> bool:
    return rec is not None and rec.ok


def ok_score(rec: ScoreRecord | None) -> float | None:
    """The record's score when ``is_ok``, else None."""
    return rec.score if rec is not None and rec.ok else None


def attack_table(
    rows: Sequence[LabelledRow], perturbations: Sequence[Perturbation], clean: Mapping[str, ScoreRecord],
    perturbed: Mapping[str, ScoreRecord], threshold: float, n_resamples: int, seed: int | None,
) -> list[AttackStats]:
    out = []
    for p in perturbations:
        pairs = []
        for r in rows:
            c, q = ok_score(clean.get(r.id)), ok_score(perturbed.get(f"{r.id}~{p.key}"))
            if c is not None and q is not None:
                pairs.append(({"label": r.label, "unit": r.unit}, float(c), float(q)))
        if pairs:
            out.append(attack_stats(pairs, threshold=threshold, key=p.key, family=p.family, kind=p.kind,
                                    n_resamples=n_resamples, seed=seed))
    return out


def pooled_flip(
    rows: Sequence[LabelledRow], attacks: Sequence[Perturbation], before: tuple[Mapping[str, ScoreRecord], Mapping[str, ScoreRecord], float],
    after: tuple[Mapping[str, ScoreRecord], Mapping[str, ScoreRecord], float], n_resamples: int, seed: int | None,
) -> dict[str, Interval]:
    """Pooled dangerous flip rate over all attacks, before and after, paired by row."""
    # verdicts (bool) of the clean and perturbed rows before and after, the label, the unit
    cols: dict[str, list[int | str]] = {k: [] for k in ("cb", "pb", "ca", "pa", "y", "unit")}
    for r in rows:
        for p in attacks:
            recs = [before[0].get(r.id), before[1].get(f"{r.id}~{p.key}"), after[0].get(r.id), after[1].get(f"{r.id}~{p.key}")]
            scores = [s for s in map(ok_score, recs) if s is not None]
            if len(scores) < len(recs):
                continue
            cols["cb"].append(scores[0] >= before[2])
            cols["pb"].append(scores[1] >= before[2])
            cols["ca"].append(scores[2] >= after[2])
            cols["pa"].append(scores[3] >= after[2])
            cols["y"].append(r.label)
            cols["unit"].append(r.unit)

    def rate(y: npt.NDArray[np.int_], c: npt.NDArray[np.bool_], p: npt.NDArray[np.bool_]) -> float:
        m = (y == 0) & ~c
        return float(p[m].mean()) if m.any() else math.nan

    def stat(y: npt.NDArray[np.int_], cb: npt.NDArray[np.bool_], pb: npt.NDArray[np.bool_], ca: npt.NDArray[np.bool_],
             pa: npt.NDArray[np.bool_]) -> dict[str, float]:
        b, a = rate(y, cb, pb), rate(y, ca, pa)
        return {"before": b, "after": a, "diff": b - a}

    arrays = [np.asarray(cols[k]) for k in ("y", "cb", "pb", "ca", "pa")]
    arrays = [a.astype(bool) if i else a.astype(int) for i, a in enumerate(arrays)]
    units = np.asarray(cols["unit"])
    return bootstrap_many(stat, arrays, n_resamples=n_resamples, seed=seed, units=units if len(units) else None)


def consistency_table(
    rows: Sequence[LabelledRow], probes: Mapping[str, Any], clean: Mapping[str, ScoreRecord],
    recs: Mapping[str, ScoreRecord], threshold: float, n_resamples: int, seed: int | None,
) -> list[ConsistencyStats]:
    out: list[ConsistencyStats] = []
    if "noul-q" in probes:
        items = []
        for r in rows:
            q, nq = ok_score(recs.get(f"{r.id}~noul-q")), ok_score(recs.get(f"{r.id}~noul-not-q"))
            if q is not None and nq is not None:
                items.append((r.unit, float(q), float(nq)))
        if items:
            out.append(noul_stats(items, n_resamples=n_resamples, seed=seed))
    choice_keys = [k for k in probes if k.startswith("choice-")]
    if choice_keys:
        items_c = []
        for r in rows:
            answers = []
            for k in choice_keys:
                rec = recs.get(f"{r.id}~{k}")
                if rec is not None and rec.ok and rec.probabilities:
                    answers.append((tuple(int(c) for c in k.split("-", 1)[1]), dict(rec.probabilities)))
            if len(answers) >= 2:
                items_c.append((r.unit, answers))
        if items_c:
            out.append(choice_stats(items_c, labels=list(CHOICE_OPTIONS), n_resamples=n_resamples, seed=seed))
    para_keys = [k for k in probes if k.startswith("paraphrase-")]
    if para_keys:
        items_p = []
        for r in rows:
            ps = [clean.get(r.id)] + [recs.get(f"{r.id}~{k}") for k in para_keys]
            scores = [s for s in map(ok_score, ps) if s is not None]
            if len(scores) == len(ps):
                items_p.append((r.unit, [float(s) for s in scores]))
        if items_p:
            out.append(paraphrase_stats(items_p, threshold=threshold, n_resamples=n_resamples, seed=seed))
    return out
