"""``calibrate``: load a judge, score a labelled set, analyse it and write the report."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from judgelab.calibration._options import options_or_default
from judgelab.calibration.analysis import Analysis, check_publishable, run_completeness
from judgelab.calibration.data import AppliedCorrections, LabelledRow, ScoreRecord, apply_corrections, read_scores, resolve_set, rows_by_task
from judgelab.calibration.pipeline._analyze_run import analyze_records
from judgelab.calibration.pipeline._judge import task_identity
from judgelab.calibration.pipeline._options import CalibrationOptions
from judgelab.calibration.report import Deployment, Section, write_report
from judgelab.calibration.scoring import (
    EvaluatorFactory,
    EvaluatorSource,
    Executor,
    LazyModel,
    LocalExecutor,
    ResumePlan,
    default_evaluator_for,
    plan_resume,
    run,
)
from judgelab.engine import ModelSource
from judgelab.errors import DataError, JudgelabError
from judgelab.evaluators import Evaluator, evaluator_tasks
from judgelab.specs import DEFAULT_MODEL_ID

__all__ = ["CalibrationOptions", "CalibrationResult", "calibrate"]

logger = logging.getLogger(__name__)

#: The error of a row that has no record because scoring stopped before it (analysed, never written).
NOT_SCORED = "not scored: scoring stopped before this row (the judge stopped answering)"


@dataclasses.dataclass(frozen=True, repr=False)
class CalibrationResult:
    """What ``calibrate`` produced: per-task analyses and policies, records, run facts and written files."""

    analyses: dict[str, Analysis]
    records: list[ScoreRecord]
    files: dict[str, Path]
    out: Path
    meta: dict[str, object] = dataclasses.field(default_factory=dict)
    deployments: dict[str, Deployment] | None = None
    figures: bool = True

    def headline(self) -> str:
        return "\n".join(f"{t}: {a.headline()}" for t, a in self.analyses.items())

    def write_report(self, sections: Sequence[Section] = ()) -> dict[str, Path]:
        """Write metrics.json and the report of this run to ``out``, with ``sections`` last (``write_report``)."""
        return write_report(self.analyses, self.out, meta=self.meta, figures=self.figures,
                            deployments=self.deployments, sections=sections)

    def __repr__(self) -> str:
        return f"CalibrationResult(out={str(self.out)!r}, tasks={list(self.analyses)})"


def _writable_folder(out: str | Path) -> Path:
    """``out``, created; a ``DataError`` saying what to do when it cannot be."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".judgelab-write-check"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise DataError(
            f"Cannot write to the output folder {str(out)!r}: {exc.strerror or exc}. Choose a writable folder with --out.",
            path=str(out),
        ) from exc
    return out


def _evidence_notes(by_task: Mapping[str, Sequence[LabelledRow]]) -> dict[str, list[str]]:
    """Per task, a warning about fact-check rows that give the judge nothing to check against."""
    notes: dict[str, list[str]] = {}
    for task, rows in by_task.items():
        if task != "fact-check":
            continue
        empty = [r.id for r in rows if not any(d.strip() for d in r.documents) and not r.user_text.strip()]
        if empty:
            shown = ", ".join(empty[:5]) + (", ..." if len(empty) > 5 else "")
            notes[task] = [
                f"{len(empty)} fact-check row(s) have no evidence (empty documents and user_text: {shown}); "
                "the judge scored their claims against an empty document. Fix or drop these rows."
            ]
            logger.warning("%s", notes[task][0])
    return notes


def calibrate(
    model: ModelSource = DEFAULT_MODEL_ID,
    set: str | Path | Sequence[LabelledRow] | None = None,  # noqa: A002 - the CLI's name
    out: str | Path = "runs/calibrate",
    *,
    task: str | Sequence[str] | None = None,
    evaluators: Mapping[str, Evaluator] | None = None,
    model_options: Mapping[str, object] | None = None,
    executor: Executor | None = None,
    options: CalibrationOptions | None = None,
) -> CalibrationResult:
    """Measure a judge on a labelled set and say which threshold to ship.

    Scores every row (resumably, into ``out/scores.jsonl``), analyses each task and fits its policy
    (``policy.json``), then writes ``metrics.json``, ``report.md``, ``report.html``, the fitted
    calibrator per task (``calibrator-TASK.json``) and the figures to ``out``.

    Parameters
    ----------
    model
        A loaded ``JudgeModel``; a ``LazyModel`` or other loader (called only when rows must be scored);
        or a model id or path. Ignored for tasks covered by ``evaluators``.
    set
        A labelled JSONL file, ``KIND:PATH`` to import on the fly (e.g.
        ``wice:../shared/data/wice/dev.jsonl``), rows, or None for the starter set.
    out
        Output folder; rerunning with the same folder resumes scoring.
    task
        Keep only rows of this task (or tasks).
    evaluators
        ``{task: Evaluator}`` to use instead of building evaluators from ``model`` (e.g. a remote judge).
    model_options
        Extra keyword arguments for ``load_model`` (e.g. ``n_threads``).
    executor
        Where rows are scored (see ``run``); default this process. With a distributed executor
        (``RayExecutor``) each replica builds its evaluator from an ``EvaluatorFactory`` of ``model``.
    options
        A ``CalibrationOptions`` (thresholds, intervals, limit, figures...); None for the defaults. It is
        the only way to set them: ``calibrate(..., limit=24)`` raises ``TypeError``. With
        ``report=False`` it stops before metrics.json and the report (``CalibrationResult.write_report``).

    Returns
    -------
    CalibrationResult
    """
    o = options_or_default(CalibrationOptions, options, "calibrate")
    o.check()
    out = _writable_folder(out)
    by_task, set_desc, n_skipped, applied = _rows_by_task(set, task=task, limit=o.limit, skip_invalid=o.skip_invalid,
                                                          seed=o.seed, corrections=o.corrections)
    judge = LazyModel(model, model_options)  # loaded only if rows must be scored
    evaluators = dict(evaluators or {})
    scores_path = out / "scores.jsonl"
    # Saved records are matched to the rows (content, spec and evaluator
    # hashes) before anything is scored or loaded: a finished run is
    # re-analysed without the model, and a changed row is rescored.
    saved = read_scores(scores_path, repair=True) if scores_path.exists() else []
    plans = {
        t: plan_resume(saved, rs, identity=task_identity(t, judge, evaluators), path=scores_path)
        for t, rs in by_task.items()
    }
    try:
        records = _with_lengths(_score_pending(by_task, plans, judge, evaluators, scores_path, o, executor), by_task)
    finally:
        judge.close()
    records = _publishable(records, by_task, o)
    if o.self_generators is None:
        o = dataclasses.replace(o, self_generators=tuple(getattr(judge.spec_before_loading, "self_generators", ()) or ()))
    meta = _run_meta(judge, records, o, set_desc=set_desc, n_skipped=n_skipped,
                     n_changed=sum(p.n_changed for p in plans.values()))
    notes = _evidence_notes(by_task)
    if applied is not None:
        meta.update(_corrections_meta(applied, by_task, notes))
    run = analyze_records(records, out, meta=meta, notes=notes, options=o)
    files = {"scores": scores_path, "metrics": out / "metrics.json", "report_md": out / "report.md", "report_html": out / "report.html"}
    result = CalibrationResult(run.analyses, records, files, out, meta, run.deployments, o.figures)
    if o.report:
        result.write_report()
    return result


def _rows_by_task(
    set: str | Path | Sequence[LabelledRow] | None,  # noqa: A002 - the CLI's name
    *, task: str | Sequence[str] | None, limit: int | None, skip_invalid: bool, seed: int | None = 0,
    corrections: str | Path | None = None,
) -> tuple[dict[str, list[LabelledRow]], str, int, AppliedCorrections | None]:
    """The rows to calibrate on, by task (filtered and limited), the set's description, rows skipped, and
    the label corrections applied to them (``None`` without a corrections file)."""
    rows, set_desc, n_skipped = resolve_set(set, skip_invalid=skip_invalid)
    applied = None
    if corrections is not None:
        rows, applied = apply_corrections(rows, corrections)
        logger.info("%s", applied.describe())
    by_task = rows_by_task(rows, task=task, limit=limit, seed=seed)
    if not by_task:
        tasks = [task] if isinstance(task, str) else list(task or [])
        raise DataError(f"No rows to score in {set_desc}" + (f" for task(s) {tasks}" if tasks else "") + ".")
    return by_task, set_desc, n_skipped, applied


def _corrections_meta(applied: AppliedCorrections, by_task: Mapping[str, Sequence[LabelledRow]],
                      notes: dict[str, list[str]]) -> dict[str, object]:
    """The run facts of applied label corrections; a note per task that has corrected rows (added to ``notes``)."""
    scored = {r.id: t for t, rs in by_task.items() for r in rs}
    mine = [i for i in applied.corrected if i in scored]
    for t in by_task:
        ids = [i for i in mine if scored[i] == t]
        if ids:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            notes.setdefault(t, []).append(
                f"{len(ids)} label(s) of this task were corrected by {applied.path} ({shown}); the figures are "
                "measured against the corrected labels.")
    return {"labels_corrected": len(mine), "corrections": applied.path, "corrections_sha256": applied.sha256}


def _publishable(records: list[ScoreRecord], by_task: Mapping[str, list[LabelledRow]],
                 o: CalibrationOptions) -> list[ScoreRecord]:
    """The records to analyse, or ``PartialRunError`` when rows failed and ``o.allow_partial`` is false.

    Rows that never got a record (scoring stopped early) are analysed as error records, so that every
    count and headline says how many of the rows were scored.
    """
    n_rows = sum(len(rs) for rs in by_task.values())
    check_publishable(run_completeness(records, n_rows), allow_partial=o.allow_partial, command="calibrate")
    have = {(r.task, r.id) for r in records}
    missing = [ScoreRecord(id=r.id, task=t, label=r.label, group=r.group, generator=r.generator, split=r.split,
                           unit=r.unit, error=NOT_SCORED)
               for t, rs in by_task.items() for r in rs if (t, r.id) not in have]
    return records + missing


def _score_pending(
    by_task: Mapping[str, list[LabelledRow]],
    plans: Mapping[str, ResumePlan],
    judge: LazyModel,
    evaluators: dict[str, Evaluator],
    scores_path: Path,
    o: CalibrationOptions,
    executor: Executor | None,
) -> list[ScoreRecord]:
    """Every row's record: reused when its plan says so, else scored (loading the judge only then)."""
    pending = [t for t, p in plans.items() if p.todo]
    sources: dict[str, EvaluatorSource] = dict(evaluators)
    if executor is not None and not isinstance(executor, LocalExecutor):
        # a distributed executor: each replica loads the model, this process never does
        sources.update(_factories(judge.source, [t for t in pending if t not in evaluators], judge.options))
    elif any(t not in evaluators for t in pending):
        model = judge.load()
        hint = "score those rows with run(your_evaluator, rows, out=...) and analyse with analyze_run()."
        for t in pending:
            if t not in sources:
                sources[t] = default_evaluator_for(t, model, hint=hint)
    records: list[ScoreRecord] = []
    for t, rs in by_task.items():
        if t not in pending:
            records += [plans[t].reuse[r.id] for r in rs]
            continue
        logger.info("scoring %d %s rows with %s", len(rs), t, type(sources[t]).__name__)
        records += run(sources[t], rs, out=scores_path, batch_size=o.batch_size, progress=o.progress, executor=executor)
    return records


def _with_lengths(records: list[ScoreRecord], by_task: Mapping[str, list[LabelledRow]]) -> list[ScoreRecord]:
    """Records reused from a run written before ``response_chars`` existed get it from their rows."""
    chars = {(t, r.id): len(r.response) for t, rs in by_task.items() for r in rs}
    return [r if r.response_chars is not None or (r.task, r.id) not in chars
            else r.model_copy(update={"response_chars": chars[(r.task, r.id)]}) for r in records]


def _factories(model: ModelSource, tasks: Sequence[str], model_options: Mapping[str, object] | None) -> dict[str, EvaluatorFactory]:
    """Evaluator factories for a distributed executor: the model travels as its id, never loaded."""
    if not isinstance(model, (str, Path)):
        raise JudgelabError(
            "A distributed executor builds the model on each replica, so calibrate() needs the model as a "
            f"spec id or path, not a loaded {type(model).__name__}."
        )
    options = dict(model_options or {})
    backend = str(options.pop("backend", "llama_cpp"))
    for t in tasks:
        if t not in evaluator_tasks():
            raise JudgelabError(
                f"calibrate cannot build an evaluator for task {t!r} from a model yet; "
                "score those rows with run(your_evaluator_factory, rows, out=..., executor=...)."
            )
    return {t: EvaluatorFactory(str(model), t, backend=backend, model_options=options) for t in tasks}


def _run_meta(
    judge: LazyModel, records: Sequence[ScoreRecord], o: CalibrationOptions, *, set_desc: str, n_skipped: int,
    n_changed: int,
) -> dict[str, object]:
    """The run facts at the top of the report and in metrics.json."""
    if judge.used:
        model_id = judge.load().spec.id
    else:  # no model loaded here: name what the records report
        reported = sorted({r.model for r in records if r.model})
        model_id = ", ".join(reported) or judge.model_id
    meta: dict[str, object] = {
        "model": model_id,
        "set": set_desc,
        "rows": len(records),
        "skipped_invalid_rows": n_skipped,
        "threshold_strategy": o.threshold_strategy,
        "calibrator": o.calibrator,
        "self_generators": ", ".join(o.self_generators or ()) or "(none)",
        "seed": o.seed,
    }
    if n_changed:
        meta["rescored_changed_rows"] = n_changed
    hashes = sorted({r.spec_hash for r in records if r.spec_hash})
    if hashes:
        meta["spec_hash"] = ", ".join(hashes)
    return meta
