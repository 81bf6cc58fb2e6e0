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

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from judgelab.calibration._options import options_or_default
from judgelab.calibration.analysis import Analysis, Interval, RunCompleteness, analyze, check_publishable, run_completeness
from judgelab.calibration.data import LabelledRow, ScoreRecord, resolve_set, rows_by_task, write_rows
from judgelab.calibration.pipeline import CalibrationOptions, CalibrationResult, calibrate
from judgelab.calibration.robustness._attack_file import read_attacks_file
from judgelab.calibration.robustness._attacks import Attack
from judgelab.calibration.robustness._consistency import consistency_probes
from judgelab.calibration.robustness._measure import attack_table, by_id, consistency_table, copies, pooled_flip
from judgelab.calibration.robustness._metrics import LabelMassStats, label_mass_stats
from judgelab.calibration.robustness._perturb import Perturbation, perturb_rows, resolve_attacks, template_layout
from judgelab.calibration.robustness._results import FenceComparison, StressResult, TaskStress
from judgelab.calibration.scoring import LazyModel, run
from judgelab.engine import JudgeModel
from judgelab.errors import DataError, JudgelabError
from judgelab.evaluators import Evaluator, build_evaluator
from judgelab.specs import DEFAULT_MODEL_ID

__all__ = ["CONSISTENCY_CHECKS", "FenceComparison", "StressOptions", "StressResult", "TaskStress", "stress"]

logger = logging.getLogger(__name__)

#: The consistency checks a stress run can ask.
CONSISTENCY_CHECKS: tuple[str, ...] = ("noul", "choice", "paraphrase")


@dataclass(frozen=True)
class StressOptions(CalibrationOptions):
    """The options of a stress run: ``CalibrationOptions`` (passed on to ``calibrate``) and these.

    Attributes
    ----------
    attacks
        Perturbations (see ``resolve_attacks``); None for ``DEFAULT_ATTACKS``
        (or, with ``attacks_file``, for the file's attacks).
    attacks_file
        A JSONL file of your own attacks (see ``read_attacks_file``): added
        to the built-in ones, reported like them; ``attacks`` selects among
        both.
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
    """

    attacks: str | Sequence[str | Attack | Perturbation] | None = None
    attacks_file: str | Path | None = None
    consistency: Sequence[str] = CONSISTENCY_CHECKS
    fence: bool = False
    label_mass: bool = False
    low_mass: float | None = None

    def calibration(self) -> CalibrationOptions:
        """The ``CalibrationOptions`` part, for ``calibrate``; ``report`` is always False (and ignored here):
        stress writes the report itself, once, with its Robustness section."""
        return CalibrationOptions(**{f.name: getattr(self, f.name) for f in fields(CalibrationOptions)
                                     if f.name != "report"}, report=False)


@dataclass(frozen=True)
class _StressRun:
    """What every task of one stress run shares: its options, perturbations, folder and lazy model."""

    o: StressOptions
    perturbations: tuple[Perturbation, ...]
    sdir: Path
    lazy: LazyModel | None
    outcomes: list[RunCompleteness] = field(default_factory=list)
    """How many rows of each scoring call got a score (``check_publishable`` reads them at the end)."""

    def score(self, evaluator: Evaluator, rows: Sequence[LabelledRow], name: str) -> dict[str, ScoreRecord]:
        """Score ``rows`` into ``stress/NAME`` (resumable), by row id."""
        records = run(evaluator, rows, out=self.sdir / name, batch_size=self.o.batch_size, progress=self.o.progress)
        self.outcomes.append(run_completeness(records, len(rows)))
        return by_id(records)

    def check_publishable(self) -> None:
        """``PartialRunError`` when stressed rows failed, unless the options allow a partial run."""
        first = next((c.first_error for c in self.outcomes if c.first_error), "")
        total = RunCompleteness(sum(c.n_rows for c in self.outcomes), sum(c.n_scored for c in self.outcomes),
                                first, sum(c.n_unscored for c in self.outcomes))
        check_publishable(total, allow_partial=self.o.allow_partial, command="stress")


def stress(
    model: str | Path | JudgeModel = DEFAULT_MODEL_ID,
    set: str | Path | Sequence[LabelledRow] | None = None,  # noqa: A002 - the CLI's name
    out: str | Path = "runs/stress",
    *,
    evaluator: str | Evaluator | None = None,
    task: str | Sequence[str] | None = None,
    model_options: Mapping[str, object] | None = None,
    options: StressOptions | None = None,
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
        ``judgelab.evaluators.build_evaluator``; ``fact-checking+fenced`` fences it) or None for
        each task's default.
    task, model_options
        As for ``calibrate``.
    options
        A ``StressOptions`` (``attacks``, ``attacks_file``, ``consistency``,
        ``fence``, ``label_mass``, ``low_mass`` and those of
        ``CalibrationOptions``: ``limit``, ``threshold_strategy``, ``seed``...);
        None for the defaults. The options object is the only way to set
        them: ``stress(..., limit=12)`` raises ``TypeError``, write
        ``stress(..., options=StressOptions(limit=12))``.

    Returns
    -------
    StressResult
    """
    o = options_or_default(StressOptions, options, "stress")
    unknown = sorted({str(c) for c in o.consistency} - {*CONSISTENCY_CHECKS})
    if unknown:
        raise JudgelabError(f"Unknown consistency check(s) {unknown}; known: {', '.join(CONSISTENCY_CHECKS)}.")
    extra = read_attacks_file(o.attacks_file) if o.attacks_file is not None else []
    perturbations = resolve_attacks(o.attacks, extra)
    rows, _, _ = resolve_set(set)
    by_task = rows_by_task(rows, task=task, limit=o.limit, seed=o.seed)
    if not by_task:
        raise DataError("No rows to stress" + (f" for task(s) {task}" if task else "") + ".")
    lazy: LazyModel | None = None
    judge: JudgeModel
    if isinstance(model, (str, Path)):
        judge = lazy = LazyModel(model, model_options or {})
    else:
        judge = model
    evaluators: dict[str, Evaluator] = {}
    for t in by_task:
        evaluators[t] = evaluator if evaluator is not None and not isinstance(evaluator, str) \
            else build_evaluator(evaluator, judge, task=t)
    out = Path(out)
    cfg = _StressRun(o, tuple(perturbations), out / "stress", lazy)
    try:
        cal = calibrate(model, set, out, task=list(by_task), evaluators=evaluators, options=o.calibration())
        all_perturbed: list[LabelledRow] = []
        tasks = {t: _stress_task(cfg, t, rs, evaluators[t], cal, all_perturbed) for t, rs in by_task.items()}
        cfg.check_publishable()
    finally:
        if lazy is not None:
            lazy.close()
    return _finish(cfg, cal, tasks, out)


def _stress_task(cfg: _StressRun, t: str, rs: list[LabelledRow], ev: Evaluator, cal: CalibrationResult,
                 all_perturbed: list[LabelledRow]) -> TaskStress:
    """Perturb one task's rows, score them and the probes, and measure (``all_perturbed`` grows)."""
    clean = by_id(cal.records)
    threshold = cal.analyses[t].metrics.threshold.value
    perturbed = perturb_rows(rs, cfg.perturbations, template_layout(ev), seed=cfg.o.seed)
    all_perturbed += perturbed
    cfg.sdir.mkdir(parents=True, exist_ok=True)
    write_rows(all_perturbed, cfg.sdir / "rows.jsonl")
    logger.info("stress %s: %d perturbed rows", t, len(perturbed))
    pert = cfg.score(ev, perturbed, "scores.jsonl")
    table = attack_table(rs, cfg.perturbations, clean, pert, threshold, cfg.o.n_resamples, cfg.o.seed)
    skipped = [p.key for p in cfg.perturbations if not any(a.key == p.key for a in table)]
    probes = consistency_probes(ev, tuple(cfg.o.consistency))
    cons_recs: dict[str, ScoreRecord] = {}
    for key, probe in probes.items():
        cons_recs.update(cfg.score(probe, copies(rs, key), "consistency.jsonl"))
    cons = consistency_table(rs, probes, clean, cons_recs, threshold, cfg.o.n_resamples, cfg.o.seed)
    for check in cfg.o.consistency:
        if not any(c.check == check for c in cons):
            skipped.append(f"consistency:{check}")
    mass = None
    if cfg.o.label_mass:
        mass = _label_mass(cfg, rs, ev, threshold)
        if mass is None:
            skipped.append("label-mass")
    fence_cmp = None
    if cfg.o.fence:
        fence_cmp = _fence(cfg, rs, perturbed, ev, cal.analyses[t], (clean, pert))
    n_err = sum(1 for r in pert.values() if not r.ok) + sum(1 for r in cons_recs.values() if not r.ok)
    return TaskStress(t, getattr(ev, "name", type(ev).__name__), threshold, len(rs), table, cons,
                      mass, fence_cmp, n_err, skipped)


def _finish(cfg: _StressRun, cal: CalibrationResult, tasks: dict[str, TaskStress], out: Path) -> StressResult:
    """Write ``stress/stress.json`` and the report's Robustness section."""
    sdir = cfg.sdir
    files = dict(cal.files)
    files["stress_rows"] = sdir / "rows.jsonl"
    files["stress_scores"] = sdir / "scores.jsonl"
    files["stress_json"] = sdir / "stress.json"
    meta = {"attacks": [p.key for p in cfg.perturbations], "attacks_file": _path_or_none(cfg.o.attacks_file),
            "consistency": list(cfg.o.consistency), "fence": cfg.o.fence,
            "label_mass": cfg.o.label_mass, "seed": cfg.o.seed, "limit": cfg.o.limit}
    (sdir / "stress.json").write_text(json.dumps({"meta": meta, "tasks": {t: s.to_dict() for t, s in tasks.items()}},
                                                 indent=2, default=str) + "\n", encoding="utf-8")
    from judgelab.calibration.robustness._report import robustness_section, write_robustness_figures

    pngs = write_robustness_figures(tasks, out) if cfg.o.figures else {}
    files.update({f"robustness-{t}": out / "figures" / f"{t}-robustness.png" for t in pngs})
    section = robustness_section(tasks, {t: f"figures/{t}-robustness.png" for t in pngs}, pngs)
    files.update(cal.write_report(sections=[section]))
    return StressResult(cal, tasks, files, out)


def _path_or_none(path: str | Path | None) -> str | None:
    return None if path is None else str(path)


def _label_mass(cfg: _StressRun, rows: Sequence[LabelledRow], ev: Evaluator, threshold: float) -> LabelMassStats | None:
    lazy = cfg.lazy
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
        by = cfg.score(ev, copies(rows, "label-mass"), "label-mass.jsonl")
    finally:
        if hasattr(target, "set_label_mass"):
            target.set_label_mass(False)
        else:
            target.label_mass = False
    items = []
    for r in rows:
        rec = by.get(f"{r.id}~label-mass")
        if rec is not None and rec.score is not None and rec.ok and rec.label_mass is not None:
            items.append((r.unit, float(rec.label_mass), (rec.score >= threshold) == bool(r.label)))
    if not items:
        return None
    return label_mass_stats(items, low_mass=cfg.o.low_mass, n_resamples=cfg.o.n_resamples, seed=cfg.o.seed)


def _fence(cfg: _StressRun, rows: Sequence[LabelledRow], perturbed: Sequence[LabelledRow], ev: Evaluator, before: Analysis,
           shipped: tuple[Mapping[str, ScoreRecord], Mapping[str, ScoreRecord]]) -> FenceComparison | None:
    """The fenced template on the clean and attacked rows, against the shipped one (``shipped``: clean, perturbed)."""
    from judgelab.evaluators import fenced

    try:
        fev = fenced(ev)
    except TypeError as exc:
        logger.warning("fence comparison skipped: %s", exc)
        return None
    attacks = [p for p in cfg.perturbations if p.kind != "benign"]
    keep = {f"{r.id}~{p.key}" for r in rows for p in attacks}
    todo = list(rows) + [r for r in perturbed if r.id in keep]
    recs = cfg.score(fev, todo, "fenced.jsonl")
    fclean = {r.id: recs[r.id] for r in rows if r.id in recs}
    fa = analyze(list(fclean.values()), strategy=cfg.o.threshold_strategy, calibrator=cfg.o.calibrator, k_folds=cfg.o.k_folds,
                 n_resamples=cfg.o.n_resamples, seed=cfg.o.seed)
    t_before, t_after = before.metrics.threshold.value, fa.metrics.threshold.value
    table = attack_table(rows, attacks, fclean, recs, t_after, cfg.o.n_resamples, cfg.o.seed)
    pooled = pooled_flip(rows, attacks, (*shipped, t_before), (fclean, recs, t_after), cfg.o.n_resamples, cfg.o.seed)
    return FenceComparison(t_before, t_after, _balanced_accuracy(before), _balanced_accuracy(fa), pooled["before"],
                           pooled["after"], pooled["diff"], tuple(table))


def _balanced_accuracy(a: Analysis) -> Interval:
    """An analysis's held-out balanced accuracy with its interval."""
    return Interval.of((a.metrics.heldout or {})["balanced_accuracy"])
