"""``calibrate``: load a judge, score a labelled set, analyse it and write the report."""

from __future__ import annotations

import importlib.resources
import logging
import os
from functools import cached_property
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from judgelab.calibration._analysis import Analysis, analyze
from judgelab.calibration._executor import Executor, LocalExecutor
from judgelab.calibration._factory import EvaluatorFactory
from judgelab.calibration._importers import IMPORTERS, import_set
from judgelab.calibration._report import write_report
from judgelab.calibration._rows import LabelledRow, load_rows
from judgelab.calibration._run import ResumePlan, ScoreRecord, plan_resume, read_scores, run
from judgelab.calibration._calibrator_choice import check_calibrator_name
from judgelab.calibration._thresholds import parse_strategy
from judgelab.errors import DataError, JudgelabError, SpecError, check_parameter
from judgelab.evaluators import (
    Evaluator,
    EvaluatorIdentity,
    FactCheckingEvaluator,
    RelevancyEvaluator,
    YesNoEvaluator,
    evaluator_identity,
)
from judgelab.specs import DEFAULT_MODEL_ID, load_spec

__all__ = ["DEFAULT_EVALUATORS", "CalibrationResult", "calibrate", "default_set_path", "resolve_set", "analyze_run"]

logger = logging.getLogger(__name__)

STARTER_SET = "starter.jsonl"


def default_set_path() -> Path:
    """Where the project's starter set lives.

    Looks in ``$JUDGELAB_DATA_DIR/calibration`` (or ``$JUDGELAB_DATA_DIR``),
    then in the installed package data (``judgelab/_data/calibration``),
    then in the source checkout's ``calibration/`` folder.
    """
    tried = []
    env = os.environ.get("JUDGELAB_DATA_DIR")
    if env:
        for cand in (Path(env) / "calibration" / STARTER_SET, Path(env) / STARTER_SET):
            tried.append(str(cand))
            if cand.is_file():
                return cand
    try:
        res = importlib.resources.files("judgelab") / "_data" / "calibration" / STARTER_SET
        tried.append(str(res))
        if res.is_file():
            return Path(str(res))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        pass
    checkout = Path(__file__).resolve().parents[3] / "calibration" / STARTER_SET
    tried.append(str(checkout))
    if checkout.is_file():
        return checkout
    raise DataError(
        "The starter set was not found (tried: " + ", ".join(tried) + "). Set JUDGELAB_DATA_DIR, "
        "reinstall judgelab, or pass a set with --set FILE."
    )


def resolve_set(spec: str | Path | Sequence[LabelledRow] | None, *, skip_invalid: bool = False) -> tuple[list[LabelledRow], str, int]:
    """Rows from a set argument: None (starter set), a JSONL path, ``KIND:PATH`` or rows.

    Returns
    -------
    rows, description, n_skipped
    """
    if spec is None:
        path = default_set_path()
        ls = load_rows(path, skip_invalid=skip_invalid)
        return list(ls.rows), str(path), len(ls.skipped)
    if not isinstance(spec, (str, Path)):
        return list(spec), "(rows)", 0
    text = str(spec)
    kind, sep, rest = text.partition(":")
    if sep and kind in IMPORTERS:
        return import_set(kind, rest), text, 0
    if sep and not Path(text).exists() and len(kind) > 1:
        raise JudgelabError(f"Unknown data set kind {kind!r} in {text!r}; known kinds: {', '.join(IMPORTERS)}.")
    ls = load_rows(text, skip_invalid=skip_invalid)
    return list(ls.rows), text, len(ls.skipped)


class CalibrationResult:
    """What ``calibrate`` produced: per-task analyses, records and written files."""

    def __init__(self, analyses: dict[str, Analysis], records: list[ScoreRecord], files: dict[str, Path], out: Path) -> None:
        self.analyses = analyses
        self.records = records
        self.files = files
        self.out = out

    def headline(self) -> str:
        return "\n".join(f"{t}: {a.headline()}" for t, a in self.analyses.items())

    def __repr__(self) -> str:
        return f"CalibrationResult(out={str(self.out)!r}, tasks={list(self.analyses)})"


#: The evaluator ``calibrate`` builds from a model for each task it can score.
DEFAULT_EVALUATORS: dict[str, type[YesNoEvaluator]] = {
    "fact-check": FactCheckingEvaluator,
    "relevancy": RelevancyEvaluator,
}


class _Judge:
    """The judge model behind ``calibrate``: its spec is known up front, the model is loaded only to score.

    ``model`` is a loaded ``JudgeModel`` (used as is), a loader (a callable
    returning one, optionally with a ``spec`` attribute: what the CLI
    passes), or, as a convenience for library callers, a model id or path.
    """

    def __init__(self, model: Any, options: Mapping[str, Any]) -> None:
        self.given = model
        self.options = options
        self.loaded: Any = model if hasattr(model, "judge_many") else None
        self._owned = False
        self.used = False

    @cached_property
    def spec(self) -> Any:
        """The model spec, without loading the model (``None`` for a bare weights file)."""
        if self.loaded is not None:
            return self.loaded.spec
        spec = getattr(self.given, "spec", None)
        if spec is None and isinstance(self.given, (str, Path)):
            try:
                spec = load_spec(self.given)
            except SpecError:  # a bare weights file has no spec until it is loaded
                spec = None
        return spec

    @property
    def name(self) -> str:
        return getattr(getattr(self.given, "spec", None), "id", None) or str(self.given)

    @property
    def spec_hash_before_loading(self) -> str | None:
        """The spec hash scores will carry, when it is certain before loading."""
        if self.loaded is not None:
            return self.loaded.spec.spec_hash
        prompt = getattr(self.spec, "prompt", None)
        if getattr(prompt, "style", None) == "chat" and not prompt.chat_template:
            return None  # the loader may fall back to raw prompts (another spec hash)
        return getattr(self.spec, "spec_hash", None)

    def load(self) -> Any:
        self.used = True
        if self.loaded is None:
            if isinstance(self.given, (str, Path)):
                from judgelab.engine import load_model  # library convenience; the CLI passes a loader

                self.loaded = load_model(self.given, **self.options)
            else:
                self.loaded = self.given()
            self._owned = True
        return self.loaded

    def close(self) -> None:
        if self._owned and hasattr(self.loaded, "close"):
            self.loaded.close()


def _task_identity(task: str, judge: _Judge, evaluators: Mapping[str, Evaluator]) -> EvaluatorIdentity | None:
    """Who would score ``task`` now, known without loading the model (``None`` when unknown)."""
    if task in evaluators:
        return evaluator_identity(evaluators[task])
    cls = DEFAULT_EVALUATORS.get(task)
    if cls is None:
        return None
    return cls.default_identity(judge.spec_hash_before_loading)


def _default_evaluator_factory(model: Any) -> Callable[[str], Evaluator]:
    def make(task: str) -> Evaluator:
        cls = DEFAULT_EVALUATORS.get(task)
        if cls is not None:
            return cls(model)
        raise JudgelabError(
            f"calibrate cannot build an evaluator for task {task!r} from a model yet; "
            "score those rows with run(your_evaluator, rows, out=...) and analyse with analyze_run()."
        )

    return make


def analyze_run(
    records: Sequence[ScoreRecord] | str | Path,
    out: str | Path,
    *,
    threshold_strategy: str = "balanced_accuracy",
    calibrator: str = "auto",
    self_generators: Sequence[str] = (),
    target_error: float = 0.1,
    k_folds: int = 5,
    n_resamples: int = 1000,
    seed: int | None = 0,
    meta: Mapping[str, Any] | None = None,
    figures: bool = True,
    notes: Mapping[str, Sequence[str]] | None = None,
    policy_delta: float | None = 0.1,
) -> dict[str, Analysis]:
    """Analyse saved scores (no model needed) and write metrics.json and the reports to ``out``.

    ``notes`` are ``{task: [warning, ...]}`` about the data, stated in the report.

    With ``policy_delta`` set (the default 0.1), each task also gets a
    pass/fail/abstain policy at ``alpha = target_error`` (``policy.json``, or
    ``policy-TASK.json`` for several tasks) and a Deployment report section.
    """
    if isinstance(records, (str, Path)):
        records = read_scores(records)
    by_task: dict[str, list[ScoreRecord]] = {}
    for r in records:
        by_task.setdefault(r.task, []).append(r)
    analyses = {
        task: analyze(
            recs,
            strategy=threshold_strategy,
            calibrator=calibrator,
            self_generators=self_generators,
            k_folds=k_folds,
            target_error=target_error,
            n_resamples=n_resamples,
            seed=seed,
        )
        for task, recs in by_task.items()
    }
    for task, task_notes in (notes or {}).items():
        if task in analyses:
            analyses[task].notes.extend(task_notes)
    deployments = None
    if policy_delta is not None:
        from judgelab.calibration._deployment import deployment_for

        deployments = {
            task: deployment_for(recs, out, alpha=target_error, delta=policy_delta, seed=seed,
                                 set_name=(meta or {}).get("set"), single_task=len(by_task) == 1)
            for task, recs in by_task.items()
        }
    write_report(analyses, out, meta=meta, figures=figures, deployments=deployments)
    return analyses


def _check_options(
    *, threshold_strategy: str, calibrator: str, target_error: float, limit: int | None,
    batch_size: int, k_folds: int, n_resamples: int,
) -> None:
    """Reject bad options before any row is read, scored or a model loaded."""
    where = "calibrate"
    parse_strategy(threshold_strategy)
    check_calibrator_name(calibrator)

    def whole(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool)

    check_parameter(isinstance(target_error, (int, float)) and 0 < target_error < 1,
                    "target_error", where, "a number between 0 and 1 (exclusive)", target_error)
    check_parameter(limit is None or (whole(limit) and limit >= 1), "limit", where, "None or an int >= 1", limit)
    check_parameter(whole(batch_size) and batch_size >= 1, "batch_size", where, "an int >= 1", batch_size)
    check_parameter(whole(k_folds) and k_folds >= 2, "k_folds", where, "an int >= 2", k_folds)
    check_parameter(whole(n_resamples) and n_resamples >= 1, "n_resamples", where, "an int >= 1", n_resamples)


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
    model: str | Any = DEFAULT_MODEL_ID,
    set: str | Path | Sequence[LabelledRow] | None = None,  # noqa: A002 - the CLI's name
    out: str | Path = "runs/calibrate",
    *,
    task: str | Sequence[str] | None = None,
    threshold_strategy: str = "balanced_accuracy",
    calibrator: str = "auto",
    self_generators: Sequence[str] | None = None,
    target_error: float = 0.1,
    limit: int | None = None,
    skip_invalid: bool = False,
    evaluators: Mapping[str, Evaluator] | None = None,
    batch_size: int = 8,
    k_folds: int = 5,
    n_resamples: int = 1000,
    seed: int | None = 0,
    progress: bool = True,
    figures: bool = True,
    model_options: Mapping[str, Any] | None = None,
    executor: Executor | None = None,
) -> CalibrationResult:
    """Measure a judge on a labelled set and say which threshold to ship.

    Scores every row (resumably, into ``out/scores.jsonl``), then writes
    ``metrics.json``, ``report.md``, ``report.html``, the fitted calibrator
    per task (``calibrator-TASK.json``) and figures to ``out``.

    Parameters
    ----------
    model
        A loaded ``JudgeModel``; or a loader, a callable returning one, with
        a ``spec`` attribute naming its ``ModelSpec`` when known (called only
        when rows must be scored: a finished run is re-analysed without it;
        the CLI passes one); or a model id or path, loaded with
        ``judgelab.engine.load_model`` and ``model_options``. Ignored for
        tasks covered by ``evaluators``.
    set
        A labelled JSONL file, ``KIND:PATH`` to import on the fly (e.g.
        ``wice:../shared/data/wice/dev.jsonl``), rows, or None for the
        starter set.
    out
        Output folder; rerunning with the same folder resumes scoring.
    task
        Keep only rows of this task (or tasks).
    threshold_strategy
        See ``parse_strategy``.
    calibrator
        Calibrator to ship: ``auto`` (default: the lowest cross-validated
        ECE on the tuning rows, ties to the simpler), ``raw`` (none),
        ``temperature``, ``platt`` or ``isotonic``; one that makes the
        held-out ECE worse than raw is replaced by raw (see ``analyze``).
    self_generators
        fnmatch patterns of the judge's own family; defaults to the model
        spec's ``self_generators``.
    target_error
        Target error among decided rows for the abstain band.
    limit
        Score only the first ``limit`` rows of each task (after filtering).
    skip_invalid
        Skip malformed rows of a JSONL set instead of stopping.
    evaluators
        ``{task: Evaluator}`` to use instead of building evaluators from
        ``model`` (e.g. a tuned template or a remote judge).
    batch_size, k_folds, n_resamples, seed, progress, figures
        Scoring batch size, CV folds, bootstrap size and seed, progress bar
        and plots.
    model_options
        Extra keyword arguments for ``load_model`` (e.g. ``n_threads``).
    executor
        Where rows are scored (see ``run``); default this process. With a
        distributed executor (``RayExecutor``) no model is loaded here: each
        replica builds its evaluator from an ``EvaluatorFactory`` of
        ``model`` (then a model id or path), ``backend`` and
        ``model_options``.

    Returns
    -------
    CalibrationResult
    """
    _check_options(threshold_strategy=threshold_strategy, calibrator=calibrator, target_error=target_error,
                   limit=limit, batch_size=batch_size, k_folds=k_folds, n_resamples=n_resamples)
    out = _writable_folder(out)
    by_task, set_desc, n_skipped = _rows_by_task(set, task=task, limit=limit, skip_invalid=skip_invalid)
    judge = _Judge(model, dict(model_options or {}))
    evaluators = dict(evaluators or {})
    scores_path = out / "scores.jsonl"
    # Saved records are matched to the rows (content, spec and evaluator
    # hashes) before anything is scored or loaded: a finished run is
    # re-analysed without the model, and a changed row is rescored.
    saved = read_scores(scores_path, repair=True) if scores_path.exists() else []
    plans = {
        t: plan_resume(saved, rs, identity=_task_identity(t, judge, evaluators), path=scores_path)
        for t, rs in by_task.items()
    }
    try:
        records = _score_pending(by_task, plans, judge, evaluators, scores_path, batch_size=batch_size, progress=progress,
                                 executor=executor)
    finally:
        judge.close()
    if self_generators is None:
        self_generators = tuple(getattr(judge.spec, "self_generators", ()) or ())
    meta = _run_meta(
        judge, records, set_desc=set_desc, n_skipped=n_skipped, threshold_strategy=threshold_strategy,
        calibrator=calibrator, self_generators=self_generators, seed=seed,
        n_changed=sum(p.n_changed for p in plans.values()),
    )
    analyses = analyze_run(
        records,
        out,
        threshold_strategy=threshold_strategy,
        calibrator=calibrator,
        self_generators=self_generators,
        target_error=target_error,
        k_folds=k_folds,
        n_resamples=n_resamples,
        seed=seed,
        meta=meta,
        figures=figures,
        notes=_evidence_notes(by_task),
    )
    files = {"scores": scores_path, "metrics": out / "metrics.json", "report_md": out / "report.md", "report_html": out / "report.html"}
    return CalibrationResult(analyses, records, files, out)


def _rows_by_task(
    set: str | Path | Sequence[LabelledRow] | None,  # noqa: A002 - the CLI's name
    *, task: str | Sequence[str] | None, limit: int | None, skip_invalid: bool,
) -> tuple[dict[str, list[LabelledRow]], str, int]:
    """The rows to calibrate on, by task (filtered and limited), the set's description and rows skipped."""
    rows, set_desc, n_skipped = resolve_set(set, skip_invalid=skip_invalid)
    tasks = [task] if isinstance(task, str) else list(task or [])
    if tasks:
        rows = [r for r in rows if r.task in tasks]
    if not rows:
        raise DataError(f"No rows to score in {set_desc}" + (f" for task(s) {tasks}" if tasks else "") + ".")
    by_task: dict[str, list[LabelledRow]] = {}
    for r in rows:
        by_task.setdefault(r.task, []).append(r)
    if limit is not None:
        by_task = {t: rs[:limit] for t, rs in by_task.items()}
    return by_task, set_desc, n_skipped


def _score_pending(
    by_task: Mapping[str, list[LabelledRow]],
    plans: Mapping[str, ResumePlan],
    judge: "_Judge",
    evaluators: dict[str, Evaluator],
    scores_path: Path,
    *,
    batch_size: int,
    progress: bool,
    executor: Executor | None = None,
) -> list[ScoreRecord]:
    """Every row's record: reused when its plan says so, else scored (loading the judge only then)."""
    pending = [t for t, p in plans.items() if p.todo]
    sources: dict[str, Any] = dict(evaluators)
    if executor is not None and not isinstance(executor, LocalExecutor):
        # a distributed executor: each replica loads the model, this process never does
        sources.update(_factories(judge.given, [t for t in pending if t not in evaluators], judge.options))
    elif any(t not in evaluators for t in pending):
        factory = _default_evaluator_factory(judge.load())
        for t in pending:
            sources.setdefault(t, factory(t))
    records: list[ScoreRecord] = []
    for t, rs in by_task.items():
        if t not in pending:
            records += [plans[t].reuse[r.id] for r in rs]
            continue
        logger.info("scoring %d %s rows with %s", len(rs), t, type(sources[t]).__name__)
        records += run(sources[t], rs, out=scores_path, batch_size=batch_size, progress=progress, executor=executor)
    return records


def _factories(model: Any, tasks: Sequence[str], model_options: Mapping[str, Any] | None) -> dict[str, EvaluatorFactory]:
    """Evaluator factories for a distributed executor: the model travels as its id, never loaded."""
    if not isinstance(model, (str, Path)):
        raise JudgelabError(
            "A distributed executor builds the model on each replica, so calibrate() needs the model as a "
            f"spec id or path, not a loaded {type(model).__name__}."
        )
    options = dict(model_options or {})
    backend = str(options.pop("backend", "llama_cpp"))
    for t in tasks:
        if t not in DEFAULT_EVALUATORS:
            raise JudgelabError(
                f"calibrate cannot build an evaluator for task {t!r} from a model yet; "
                "score those rows with run(your_evaluator_factory, rows, out=..., executor=...)."
            )
    return {t: EvaluatorFactory(str(model), t, backend=backend, model_options=options) for t in tasks}


def _run_meta(
    judge: "_Judge", records: Sequence[ScoreRecord], *, set_desc: str, n_skipped: int, threshold_strategy: str,
    calibrator: str, self_generators: Sequence[str], seed: int | None, n_changed: int,
) -> dict[str, Any]:
    """The run facts at the top of the report and in metrics.json."""
    if judge.used:
        model_id = judge.loaded.spec.id
    else:  # no model loaded here: name what the records report
        reported = sorted({r.model for r in records if r.model})
        model_id = ", ".join(reported) or judge.name
    meta: dict[str, Any] = {
        "model": model_id,
        "set": set_desc,
        "rows": len(records),
        "skipped_invalid_rows": n_skipped,
        "threshold_strategy": threshold_strategy,
        "calibrator": calibrator,
        "self_generators": ", ".join(self_generators) or "(none)",
        "seed": seed,
    }
    if n_changed:
        meta["rescored_changed_rows"] = n_changed
    hashes = sorted({r.spec_hash for r in records if r.spec_hash})
    if hashes:
        meta["spec_hash"] = ", ".join(hashes)
    return meta
