"""What the pages say about a run and a row, as report blocks for the report renderer: the run's facts
and headlines (from metrics.json), and a row's prompt as the evaluator's template filled with the row.
"""

from __future__ import annotations

import logging
import math
import re

from judgelab.calibration import LabelledRow, ScoreRecord
from judgelab.calibration.report import Block, Facts, Paragraph, Section
from judgelab.errors import JudgelabError
from judgelab.evaluators import default_evaluator_name, evaluator_config
from judgelab.view._run import ViewRun

__all__ = ["RenderedPrompt", "row_prompt", "run_section"]

log = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")  # the evaluators' placeholders


def _threshold_text(run: ViewRun, task: str) -> str:
    text = f"{run.thresholds[task]:.3f}"
    if task in run.calibrated_thresholds:
        text += f" (raw score; {run.calibrated_thresholds[task]:.3f} on calibrated scores)"
    if run.metrics is None or task not in run.metrics.tasks:
        text += " (no metrics.json: 0.5, uncalibrated)"
    return text


def run_section(run: ViewRun) -> Section:
    """The run's facts and each task's headline and shipped threshold (metrics.json), as a report section."""
    blocks: list[Block] = []
    meta = run.metrics.meta if run.metrics is not None else None
    for task in run.tasks:
        tm = run.metrics.tasks.get(task) if run.metrics is not None else None
        if tm is not None and tm.headline:
            blocks.append(Paragraph(tm.headline, lead=f"{task}:", kind="headline"))
    facts = [("rows", f"{len(run.records)} scored records ({run.n_failed} failed)"),
             ("set", run.set_name or "(not named)")]
    facts += [(f"shipped threshold ({t})", _threshold_text(run, t)) for t in run.tasks]
    if meta is not None:
        facts += [(k, str(v)) for k, v in meta.model_dump(exclude_none=True).items() if k not in ("set", "rows")]
    blocks.append(Facts(tuple(facts)))
    if meta is not None and meta.labels_corrected is not None:
        blocks.append(Paragraph(f"{meta.labels_corrected} label(s) corrected by {meta.corrections} "
                                f"(sha256 {str(meta.corrections_sha256)[:12]}).", kind="note"))
    if run.set_problem:
        blocks.append(Paragraph(f"Documents and claims are not shown: {run.set_problem}.", kind="warning"))
    return Section(f"Run {run.name}", tuple(blocks))


class RenderedPrompt(str):
    """The user turn of a row's prompt (the evaluator's template filled with the row), with how it was made."""

    how: str

    def __new__(cls, text: str, how: str) -> "RenderedPrompt":
        obj = super().__new__(cls, text)
        obj.how = how
        return obj


def _values(row: LabelledRow) -> dict[str, str]:
    """Every placeholder the fact-check and relevancy templates read, from the row (as their evaluators fill them)."""
    docs = "\n\n".join(row.documents)
    return {"document": docs or row.user_text, "claim": row.response, "query": row.user_text,
            "response": row.response, "context": "\n".join(row.documents)}


def row_prompt(record: ScoreRecord, row: LabelledRow | None) -> RenderedPrompt | None:
    """The prompt's user turn re-rendered without a model, when the record's template is the task's default.

    ``None`` when it cannot be: the set's row is not at hand, the record was scored with another
    template or does not say which (its ``template_hash`` is not the default evaluator's), or the task
    has no template evaluator.
    """
    if row is None:
        return None
    try:
        config = evaluator_config(default_evaluator_name(record.task), task=record.task)
    except JudgelabError as exc:
        log.debug("no template for task %s: %s", record.task, exc)
        return None
    if config is None or record.template_hash != config.template_hash:
        return None
    values = _values(row)
    text = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), config.template)
    how = (f"{config.name} template (hash {config.template_hash}) filled with this row; the model wraps it in its "
           "system prompt and chat template, and a document longer than one chunk is judged chunk by chunk.")
    return RenderedPrompt(text, how)


def fmt(x: float | None, spec: str = ".3f") -> str:
    """A number for a page: ``n/a`` for ``None`` or nan."""
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)
