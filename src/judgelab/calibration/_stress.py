"""``stress``: what breaks a judge, measured on a labelled set next to its accuracy.

A stress run first calibrates (``calibrate``: clean scores, shipped
threshold, report), then judges perturbed copies of the same rows with the
same evaluator and threshold, asks the consistency probes, optionally
measures the label mass and the fenced-template defence, and adds a
"Robustness" section to the report. Everything is scored through the
resumable ``run`` into files under ``OUT/stress/``, so a killed stress run
resumes, and a finished one is re-analysed without loading the model.

Files
-----
``OUT/stress/rows.jsonl``
    The perturbed rows (seeded; id ``ROW~PERTURBATION``).
``OUT/stress/scores.jsonl``
    Their scores.
``OUT/stress/consistency.jsonl``
    The consistency probes' scores (id ``ROW~PROBE``).
``OUT/stress/label-mass.jsonl``
    Clean rows scored with the label mass (opt-in).
``OUT/stress/fenced.jsonl``
    Clean and perturbed rows scored with the fenced template (opt-in).
``OUT/stress/stress.json``
    Every figure of the robustness section.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.calibration._analysis import analyze
from judgelab.calibration._bootstrap import Interval, bootstrap_many
from judgelab.calibration._rows import LabelledRow, write_rows
from judgelab.calibration._run import ScoreRecord, run
from judgelab.calibration._stress_consistency import CHOICE_OPTIONS, consistency_probes
from judgelab.calibration._stress_metrics import (
    AttackStats,
    ConsistencyStats,
    LabelMassStats,
    attack_stats,
    choice_stats,
    label_mass_stats,
    noul_stats,
    paraphrase_stats,
)
from judgelab.calibration._stress_perturb import (
    Perturbation,
    perturb_rows,
    resolve_attacks,
    template_layout,
)
from judgelab.calibration._suite import CalibrationResult, calibrate, resolve_set
from judgelab.errors import DataError, JudgelabError, SpecError
from judgelab.specs import DEFAULT_MODEL_ID, load_spec

__all__ = ["CONSISTENCY_CHECKS", "EVALUATORS", "FenceComparison", "StressResult", "TaskStress", "make_evaluator", "stress"]

logger = logging.getLogger(__name__)

#: The consistency checks a stress run can ask.
CONSISTENCY_CHECKS: tuple[str, ...] = ("noul", "choice", "paraphrase")


class _LazyModel:
    """A model that is loaded on first use, so that a finished run needs none."""

    def __init__(self, model: str | Path, options: Mapping[str, Any]) -> None:
        self._spec_id = str(model)
        self._options = dict(options)
        self._model: Any = None
        self._label_mass = False

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def spec(self) -> Any:
        """The model spec, read without loading the model when the spec's hash is final before loading."""
        if self._model is not None:
            return self._model.spec
        try:
            spec = load_spec(self._spec_id)
        except SpecError:  # a bare weights file: its spec comes with the model
            return self._get().spec
        prompt = getattr(spec, "prompt", None)
        if getattr(prompt, "style", None) == "chat" and not getattr(prompt, "chat_template", None):
            return self._get().spec  # the loader may change the prompt format (and the hash)
        return spec

    def _get(self) -> Any:
        if self._model is None:
            from judgelab.engine import load_model

            logger.info("loading %s for the stress run", self._spec_id)
            self._model = load_model(self._spec_id, **self._options)
            self._model.label_mass = self._label_mass
        return self._model

    def set_label_mass(self, on: bool) -> None:
        self._label_mass = on
        if self._model is not None:
            self._model.label_mass = on

    def judge_many(self, prompts: Sequence[str], labels: Sequence[str]) -> list[Any]:
        return self._get().judge_many(prompts, labels)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._get(), name)

    def close(self) -> None:
        if self._model is not None and hasattr(self._model, "close"):
            self._model.close()


def _fact_checking(model: Any) -> Any:
    from judgelab.evaluators import FactCheckingEvaluator

    return FactCheckingEvaluator(model)


def _relevancy(model: Any) -> Any:
    from judgelab.evaluators import RelevancyEvaluator

    return RelevancyEvaluator(model)


def _bespoke(model: Any) -> Any:
    from judgelab.evaluators import FactCheckingEvaluator

    return FactCheckingEvaluator.for_bespoke_minicheck(model)


#: Evaluator names ``stress`` and the CLI accept (``NAME+fenced`` fences any of them).
EVALUATORS: dict[str, Callable[[Any], Any]] = {
    "fact-checking": _fact_checking,
    "relevancy": _relevancy,
    "bespoke-minicheck": _bespoke,
}
_TASK_DEFAULT = {"fact-check": "fact-checking", "relevancy": "relevancy"}


def make_evaluator(name: str | None, task: str, model: Any) -> Any:
    """An evaluator from a name: one of ``EVALUATORS``, ``NAME+fenced``, or ``module:callable(model)``.

    ``None`` picks the task's default (``fact-checking`` for fact-check rows,
    ``relevancy`` for relevancy rows).
    """
    from judgelab.evaluators import fenced

    name = name or _TASK_DEFAULT.get(task)
    if name is None:
        raise JudgelabError(
            f"No default evaluator for task {task!r}; pass evaluator= (an Evaluator, a name in "
            f"{', '.join(EVALUATORS)}, or 'module:callable' that takes the model)."
        )
    base, _, suffix = name.partition("+")
    if suffix not in ("", "fenced"):
        raise JudgelabError(f"Unknown evaluator modifier {suffix!r} in {name!r}; the only one is '+fenced'.")
    if base in EVALUATORS:
        ev = EVALUATORS[base](model)
    elif ":" in base:
        module, _, attr = base.partition(":")
        try:
            ev = getattr(importlib.import_module(module), attr)(model)
        except (ImportError, AttributeError) as exc:
            raise JudgelabError(f"Cannot load evaluator {base!r}: {exc}. Give 'module:callable'.") from exc
    else:  # the one registry: cascade@cascade.json, jury@MODEL,MODEL and whatever else is registered
        from judgelab.evaluators import build_evaluator

        ev = build_evaluator(base, model, task=task)
    return fenced(ev) if suffix else ev


@dataclass(frozen=True)
class FenceComparison:
    """The fenced template against the shipped one, on the same rows.

    ``flip_before`` / ``flip_after`` pool the dangerous flips of every attack
    (not the benign perturbations); ``flip_difference`` is before - after
    (positive: fencing helps), paired by row. ``measurably_better`` is true
    when that difference's interval excludes 0 and the fenced balanced
    accuracy is not below the shipped one's interval.
    """

    threshold_before: float
    threshold_after: float
    balanced_accuracy_before: Interval
    balanced_accuracy_after: Interval
    flip_before: Interval
    flip_after: Interval
    flip_difference: Interval
    attacks_after: tuple[AttackStats, ...]

    @property
    def measurably_better(self) -> bool:
        d = self.flip_difference
        lowers = not math.isnan(d.low) and d.low > 0
        ba_ok = math.isnan(self.balanced_accuracy_before.low) or (
            self.balanced_accuracy_after.estimate >= self.balanced_accuracy_before.low)
        return bool(lowers and ba_ok)

    def verdict(self) -> str:
        if self.measurably_better:
            return "the fenced template measurably lowers the dangerous flip rate without costing accuracy"
        return ("the fenced template is not measurably better on these rows (the interval of the flip-rate "
                "difference includes 0, or accuracy dropped beyond its interval); keep it opt-in")

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold_before": self.threshold_before, "threshold_after": self.threshold_after,
            "balanced_accuracy_before": self.balanced_accuracy_before.to_dict(),
            "balanced_accuracy_after": self.balanced_accuracy_after.to_dict(),
            "dangerous_flip_before": self.flip_before.to_dict(), "dangerous_flip_after": self.flip_after.to_dict(),
            "dangerous_flip_before_minus_after": self.flip_difference.to_dict(),
            "measurably_better": self.measurably_better, "verdict": self.verdict(),
            "attacks_after": [a.to_dict() for a in self.attacks_after],
        }


@dataclass
class TaskStress:
    """The stress figures of one task."""

    task: str
    evaluator: str
    threshold: float
    n_rows: int
    attacks: list[AttackStats]
    consistency: list[ConsistencyStats]
    label_mass: LabelMassStats | None = None
    fence: FenceComparison | None = None
    n_errors: int = 0
    skipped: list[str] = field(default_factory=list)

    def worst(self) -> AttackStats | None:
        """The non-benign perturbation with the highest dangerous flip rate."""
        cands = [a for a in self.attacks if a.kind != "benign" and not math.isnan(a.fail_to_pass.estimate)]
        return max(cands, key=lambda a: (a.fail_to_pass.estimate, a.delta_p.estimate), default=None)

    def headline(self) -> str:
        w = self.worst()
        if w is None:
            return ("no attack could be measured: no row labelled 0 was failed by the clean judge "
                    f"at threshold {self.threshold:.3f}")
        fp = w.fail_to_pass
        rng = "" if math.isnan(fp.low) else f" [{100 * fp.low:.0f}%, {100 * fp.high:.0f}%]"
        return (f"the worst attack ({w.key}) turns {100 * fp.estimate:.0f}%{rng} of failing answers into PASS "
                f"({w.n_fail} rows labelled 0 that the clean judge failed, threshold {self.threshold:.3f})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task, "evaluator": self.evaluator, "threshold": self.threshold, "rows": self.n_rows,
            "errors": self.n_errors, "headline": self.headline(), "skipped": self.skipped,
            "attacks": [a.to_dict() for a in self.attacks],
            "consistency": [c.to_dict() for c in self.consistency],
            "label_mass": self.label_mass.to_dict() if self.label_mass else None,
            "fence": self.fence.to_dict() if self.fence else None,
        }


class StressResult:
    """What ``stress`` produced: the calibration, the per-task stress figures and the files."""

    def __init__(self, calibration: CalibrationResult, tasks: dict[str, TaskStress], files: dict[str, Path], out: Path) -> None:
        self.calibration = calibration
        self.tasks = tasks
        self.files = files
        self.out = out

    def headline(self) -> str:
        return "\n".join(f"{t}: {s.headline()}" for t, s in self.tasks.items())

    def __repr__(self) -> str:
        return f"StressResult(out={str(self.out)!r}, tasks={list(self.tasks)})"


def _select(rows: Sequence[LabelledRow], task: str | Sequence[str] | None, limit: int | None) -> dict[str, list[LabelledRow]]:
    """The rows ``calibrate`` scores, by task (same filter and limit)."""
    tasks = [task] if isinstance(task, str) else list(task or [])
    by_task: dict[str, list[LabelledRow]] = {}
    for r in rows:
        if not tasks or r.task in tasks:
            by_task.setdefault(r.task, []).append(r)
    if limit is not None:
        by_task = {t: rs[:limit] for t, rs in by_task.items()}
    return by_task


def _copies(rows: Sequence[LabelledRow], suffix: str) -> list[LabelledRow]:
    return [r.model_copy(update={"id": f"{r.id}~{suffix}"}) for r in rows]


def _by_id(records: Sequence[ScoreRecord]) -> dict[str, ScoreRecord]:
    return {r.id: r for r in records}


def _ok(rec: ScoreRecord | None) -> bool:
    return rec is not None and rec.ok


def _attack_table(
    rows: Sequence[LabelledRow], perturbations: Sequence[Perturbation], clean: Mapping[str, ScoreRecord],
    perturbed: Mapping[str, ScoreRecord], threshold: float, n_resamples: int, seed: int | None,
) -> list[AttackStats]:
    out = []
    for p in perturbations:
        pairs = []
        for r in rows:
            c, q = clean.get(r.id), perturbed.get(f"{r.id}~{p.key}")
            if _ok(c) and _ok(q):
                pairs.append(({"label": r.label, "cluster": r.fold_group}, float(c.score), float(q.score)))
        if pairs:
            out.append(attack_stats(pairs, threshold=threshold, key=p.key, family=p.family, kind=p.kind,
                                    n_resamples=n_resamples, seed=seed))
    return out


def _pooled_flip(
    rows: Sequence[LabelledRow], attacks: Sequence[Perturbation], before: tuple[Mapping[str, ScoreRecord], Mapping[str, ScoreRecord], float],
    after: tuple[Mapping[str, ScoreRecord], Mapping[str, ScoreRecord], float], n_resamples: int, seed: int | None,
) -> dict[str, Interval]:
    """Pooled dangerous flip rate over all attacks, before and after, paired by row."""
    cols: dict[str, list] = {k: [] for k in ("cb", "pb", "ca", "pa", "y", "g")}
    for r in rows:
        for p in attacks:
            recs = [before[0].get(r.id), before[1].get(f"{r.id}~{p.key}"), after[0].get(r.id), after[1].get(f"{r.id}~{p.key}")]
            if not all(_ok(x) for x in recs):
                continue
            cols["cb"].append(recs[0].score >= before[2])
            cols["pb"].append(recs[1].score >= before[2])
            cols["ca"].append(recs[2].score >= after[2])
            cols["pa"].append(recs[3].score >= after[2])
            cols["y"].append(r.label)
            cols["g"].append(r.fold_group)

    def rate(y, c, p):
        m = (y == 0) & ~c
        return float(p[m].mean()) if m.any() else math.nan

    def stat(y, cb, pb, ca, pa):
        b, a = rate(y, cb, pb), rate(y, ca, pa)
        return {"before": b, "after": a, "diff": b - a}

    arrays = [np.asarray(cols[k]) for k in ("y", "cb", "pb", "ca", "pa")]
    arrays = [a.astype(bool) if i else a.astype(int) for i, a in enumerate(arrays)]
    groups = np.asarray(cols["g"])
    return bootstrap_many(stat, arrays, n_resamples=n_resamples, seed=seed, clusters=groups if len(groups) else None)


def stress(
    model: str | Any = DEFAULT_MODEL_ID,
    set: str | Path | Sequence[LabelledRow] | None = None,  # noqa: A002 - the CLI's name
    out: str | Path = "runs/stress",
    *,
    evaluator: str | Any | None = None,
    attacks: str | Sequence[str] | None = None,
    consistency: Sequence[str] = CONSISTENCY_CHECKS,
    fence: bool = False,
    label_mass: bool = False,
    low_mass: float | None = None,
    task: str | Sequence[str] | None = None,
    limit: int | None = None,
    threshold_strategy: str = "balanced_accuracy",
    calibrator: str = "platt",
    batch_size: int = 8,
    k_folds: int = 5,
    n_resamples: int = 1000,
    seed: int | None = 0,
    progress: bool = True,
    figures: bool = True,
    model_options: Mapping[str, Any] | None = None,
) -> StressResult:
    """Calibrate a judge on a labelled set, then measure what moves it.

    Parameters
    ----------
    model
        A model spec id or path (loaded only when something is left to
        score) or a loaded ``JudgeModel``.
    set
        As for ``calibrate``: a JSONL file, ``KIND:PATH`` (e.g.
        ``summedits:../shared/data/summedits``), rows, or None for the starter set.
    out
        The run folder: the calibration files, plus ``stress/`` (see the
        module docstring). Rerunning with the same folder resumes.
    evaluator
        An ``Evaluator`` (used for every task), an evaluator name (see
        ``make_evaluator``; ``fact-checking+fenced`` fences it) or None for
        each task's default.
    attacks
        Perturbations (see ``resolve_attacks``); None for ``DEFAULT_ATTACKS``.
    consistency
        Which of ``noul``, ``choice``, ``paraphrase`` to ask (the first two
        need an evaluator with a ``model``).
    fence
        Also score the clean and attacked rows with the fenced template
        (``judgelab.evaluators.fenced``) and compare.
    label_mass
        Also score the clean rows reading the full output layer, for the
        labels' share of the next-token probability (costs a full-vocabulary
        pass per prompt).
    low_mass
        Label mass at or below which an answer counts as low-mass; None for
        the run's lowest quarter.
    task, limit, threshold_strategy, calibrator, batch_size, k_folds, n_resamples, seed, progress, figures, model_options
        As for ``calibrate``.

    Returns
    -------
    StressResult
    """
    unknown = sorted({str(c) for c in consistency} - {*CONSISTENCY_CHECKS})
    if unknown:
        raise JudgelabError(f"Unknown consistency check(s) {unknown}; known: {', '.join(CONSISTENCY_CHECKS)}.")
    perturbations = resolve_attacks(attacks)
    rows, _, _ = resolve_set(set)
    by_task = _select(rows, task, limit)
    if not by_task:
        raise DataError("No rows to stress" + (f" for task(s) {task}" if task else "") + ".")
    lazy = _LazyModel(model, model_options or {}) if isinstance(model, (str, Path)) else None
    judge = lazy if lazy is not None else model
    evaluators: dict[str, Any] = {}
    for t in by_task:
        evaluators[t] = evaluator if (evaluator is not None and not isinstance(evaluator, str)) else make_evaluator(evaluator, t, judge)
    out = Path(out)
    sdir = out / "stress"
    try:
        cal = calibrate(
            model, set, out,
            task=list(by_task), threshold_strategy=threshold_strategy, calibrator=calibrator, limit=limit,
            evaluators=evaluators, batch_size=batch_size, k_folds=k_folds, n_resamples=n_resamples, seed=seed,
            progress=progress, figures=figures,
        )
        clean = _by_id(cal.records)
        all_perturbed: list[LabelledRow] = []
        tasks: dict[str, TaskStress] = {}
        for t, rs in by_task.items():
            ev = evaluators[t]
            threshold = cal.analyses[t].threshold
            perturbed = perturb_rows(rs, perturbations, template_layout(ev), seed=seed)
            all_perturbed += perturbed
            sdir.mkdir(parents=True, exist_ok=True)
            write_rows(all_perturbed, sdir / "rows.jsonl")
            logger.info("stress %s: %d perturbed rows", t, len(perturbed))
            pert = _by_id(run(ev, perturbed, out=sdir / "scores.jsonl", batch_size=batch_size, progress=progress))
            table = _attack_table(rs, perturbations, clean, pert, threshold, n_resamples, seed)
            skipped = [p.key for p in perturbations if not any(a.key == p.key for a in table)]
            probes = consistency_probes(ev, tuple(consistency))
            cons_recs: dict[str, ScoreRecord] = {}
            for key, probe in probes.items():
                cons_recs.update(_by_id(run(probe, _copies(rs, key), out=sdir / "consistency.jsonl",
                                            batch_size=batch_size, progress=progress)))
            cons = _consistency(rs, probes, clean, cons_recs, threshold, n_resamples, seed)
            for check in consistency:
                if not any(c.check == check for c in cons):
                    skipped.append(f"consistency:{check}")
            mass = None
            if label_mass:
                mass = _label_mass(rs, ev, lazy, sdir, threshold, low_mass, batch_size, progress, n_resamples, seed)
                if mass is None:
                    skipped.append("label-mass")
            fence_cmp = None
            if fence:
                fence_cmp = _fence(rs, perturbed, perturbations, ev, cal, t, clean, pert, sdir, threshold_strategy,
                                   calibrator, k_folds, batch_size, progress, n_resamples, seed)
            n_err = sum(1 for r in pert.values() if not r.ok) + sum(1 for r in cons_recs.values() if not r.ok)
            tasks[t] = TaskStress(t, getattr(ev, "name", type(ev).__name__), threshold, len(rs), table, cons,
                                  mass, fence_cmp, n_err, skipped)
    finally:
        if lazy is not None:
            lazy.close()
    files = dict(cal.files)
    files["stress_rows"] = sdir / "rows.jsonl"
    files["stress_scores"] = sdir / "scores.jsonl"
    files["stress_json"] = sdir / "stress.json"
    meta = {"attacks": [p.key for p in perturbations], "consistency": list(consistency), "fence": fence,
            "label_mass": label_mass, "seed": seed, "limit": limit}
    (sdir / "stress.json").write_text(json.dumps({"meta": meta, "tasks": {t: s.to_dict() for t, s in tasks.items()}},
                                                 indent=2, default=str) + "\n", encoding="utf-8")
    from judgelab.calibration._stress_report import add_robustness_section

    files.update(add_robustness_section(tasks, out, figures=figures))
    return StressResult(cal, tasks, files, out)


def _consistency(
    rows: Sequence[LabelledRow], probes: Mapping[str, Any], clean: Mapping[str, ScoreRecord],
    recs: Mapping[str, ScoreRecord], threshold: float, n_resamples: int, seed: int | None,
) -> list[ConsistencyStats]:
    out: list[ConsistencyStats] = []
    if "noul-q" in probes:
        items = []
        for r in rows:
            q, nq = recs.get(f"{r.id}~noul-q"), recs.get(f"{r.id}~noul-not-q")
            if _ok(q) and _ok(nq):
                items.append((r.fold_group, float(q.score), float(nq.score)))
        if items:
            out.append(noul_stats(items, n_resamples=n_resamples, seed=seed))
    choice_keys = [k for k in probes if k.startswith("choice-")]
    if choice_keys:
        items_c = []
        for r in rows:
            answers = []
            for k in choice_keys:
                rec = recs.get(f"{r.id}~{k}")
                if _ok(rec) and rec.probabilities:
                    answers.append((tuple(int(c) for c in k.split("-", 1)[1]), dict(rec.probabilities)))
            if len(answers) >= 2:
                items_c.append((r.fold_group, answers))
        if items_c:
            out.append(choice_stats(items_c, labels=list(CHOICE_OPTIONS), n_resamples=n_resamples, seed=seed))
    para_keys = [k for k in probes if k.startswith("paraphrase-")]
    if para_keys:
        items_p = []
        for r in rows:
            ps = [clean.get(r.id)] + [recs.get(f"{r.id}~{k}") for k in para_keys]
            if all(_ok(x) for x in ps):
                items_p.append((r.fold_group, [float(x.score) for x in ps]))
        if items_p:
            out.append(paraphrase_stats(items_p, threshold=threshold, n_resamples=n_resamples, seed=seed))
    return out


def _label_mass(rows, ev, lazy, sdir, threshold, low_mass, batch_size, progress, n_resamples, seed) -> LabelMassStats | None:
    model = getattr(ev, "model", None)
    target = lazy if lazy is not None and model is lazy else model
    if target is None or not (hasattr(target, "set_label_mass") or hasattr(target, "label_mass")):
        logger.warning("label mass needs an evaluator over a judgelab JudgeModel; skipped")
        return None
    if hasattr(target, "set_label_mass"):
        target.set_label_mass(True)
    else:
        target.label_mass = True
    try:
        recs = run(ev, _copies(rows, "label-mass"), out=sdir / "label-mass.jsonl", batch_size=batch_size, progress=progress)
    finally:
        if hasattr(target, "set_label_mass"):
            target.set_label_mass(False)
        else:
            target.label_mass = False
    by = _by_id(recs)
    items = []
    for r in rows:
        rec = by.get(f"{r.id}~label-mass")
        if _ok(rec) and rec.label_mass is not None:
            items.append((r.fold_group, float(rec.label_mass), (rec.score >= threshold) == bool(r.label)))
    if not items:
        return None
    return label_mass_stats(items, low_mass=low_mass, n_resamples=n_resamples, seed=seed)


def _fence(rows, perturbed, perturbations, ev, cal, task, clean, pert, sdir, strategy, calibrator, k_folds,
           batch_size, progress, n_resamples, seed) -> FenceComparison | None:
    from judgelab.evaluators import fenced

    try:
        fev = fenced(ev)
    except TypeError as exc:
        logger.warning("fence comparison skipped: %s", exc)
        return None
    attacks = [p for p in perturbations if p.kind != "benign"]
    keep = {f"{r.id}~{p.key}" for r in rows for p in attacks}
    todo = list(rows) + [r for r in perturbed if r.id in keep]
    recs = _by_id(run(fev, todo, out=sdir / "fenced.jsonl", batch_size=batch_size, progress=progress))
    fclean = {r.id: recs[r.id] for r in rows if r.id in recs}
    fa = analyze(list(fclean.values()), strategy=strategy, calibrator=calibrator, k_folds=k_folds,
                 n_resamples=n_resamples, seed=seed)
    before = cal.analyses[task]
    table = _attack_table(rows, attacks, fclean, recs, fa.threshold, n_resamples, seed)
    pooled = _pooled_flip(rows, attacks, (clean, pert, before.threshold), (fclean, recs, fa.threshold), n_resamples, seed)
    return FenceComparison(before.threshold, fa.threshold, before.heldout["balanced_accuracy"],
                           fa.heldout["balanced_accuracy"], pooled["before"], pooled["after"], pooled["diff"],
                           tuple(table))
