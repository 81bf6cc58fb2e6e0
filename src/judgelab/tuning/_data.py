"""Training data: labelled rows per source, split by unit, balanced, rendered by the evaluators.

Rows come through calibration's ``resolve_set`` (any ``--set`` that
``calibrate`` accepts). Each set is a *source*. Per source, whole units
(``LabelledRow.unit``: a document's rows, ``meta.pair`` edits) are held
out, then the training rows are sampled with equal counts per label and a
share of the total proportional to the source's weight. Every row is
rendered by the evaluator that serves its task, so a tuned judge is asked
exactly as it was taught.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.calibration import LabelledRow, resolve_set
from judgelab.errors import DataError, ParameterError
from judgelab.evaluators import build_evaluator, registered_evaluator
from judgelab.tuning._config import TuneConfig

__all__ = ["Example", "Source", "load_sources", "split_sources", "balance_examples", "render_examples", "fits", "heldout_split"]

log = logging.getLogger(__name__)

_TASKS = ("fact-check", "relevancy")


@dataclass(frozen=True)
class Source:
    """One ``--set``: its name, rows and weight."""

    name: str
    spec: str
    rows: tuple[LabelledRow, ...]
    weight: float


@dataclass(frozen=True)
class Example:
    """A rendered training row: the token ids of each prompt (several when chunked) and the label."""

    row_id: str
    source: str
    label: int
    prompts: tuple[tuple[int, ...], ...]
    labels: tuple[str, str]

    @property
    def n_tokens(self) -> int:
        return sum(len(p) for p in self.prompts)


def _source_name(spec: str, index: int) -> str:
    kind, sep, rest = spec.partition(":")
    stem = Path(rest if sep else spec).stem or f"set{index}"
    return f"{kind}:{stem}" if sep and len(kind) > 1 else stem


def _document_key(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def excluded_documents(config: TuneConfig) -> set[str]:
    """Keys of every document of the ``exclude`` sets (whitespace-normalised)."""
    keys: set[str] = set()
    for spec in config.exclude:
        rows, _, _ = resolve_set(spec)
        keys.update(_document_key(d) for r in rows for d in r.documents)
    return keys


def _without_excluded(rows: Sequence[LabelledRow], excluded: set[str]) -> tuple[LabelledRow, ...]:
    return tuple(r for r in rows if not any(_document_key(d) in excluded for d in r.documents))


def load_sources(config: TuneConfig) -> list[Source]:
    """Read every set; rows of tasks the yes/no evaluators cannot score, or over excluded documents, are left out.

    Raises
    ------
    DataError
        When a set has no scorable rows, or only one class.
    """
    sources = []
    names: Counter[str] = Counter()
    excluded = excluded_documents(config)
    for i, (spec, weight) in enumerate(zip(config.sets, config.source_weights())):
        rows, desc, _ = resolve_set(spec)
        kept = _without_excluded([r for r in rows if r.task in _TASKS], excluded)
        if len(kept) < len(rows):
            log.info("set %s: %d of %d rows left out (other tasks or excluded documents)", desc,
                     len(rows) - len(kept), len(rows))
        if not kept:
            raise DataError(f"Set {desc} has no fact-check or relevancy rows to tune on "
                            f"({len(rows)} rows of other tasks).", path=str(spec))
        classes = {r.label for r in kept}
        if len(classes) < 2:
            raise DataError(f"Set {desc} has only label {classes.pop()} in its {len(kept)} rows; tuning "
                            "needs both passing (1) and failing (0) rows in every set.", path=str(spec))
        name = _source_name(spec, i)
        names[name] += 1
        if names[name] > 1:
            name = f"{name}#{names[name]}"
        sources.append(Source(name, spec, kept, float(weight)))
    return sources


def _split_units(rows: Sequence[LabelledRow], share: float, rng: np.random.Generator) -> tuple[list, list]:
    """(train, held-out) rows, whole units to one side; at least one unit held out when share > 0."""
    by_unit: dict[str, list[LabelledRow]] = defaultdict(list)
    for r in rows:
        by_unit[r.unit].append(r)
    keys = sorted(by_unit)
    rng.shuffle(keys)
    n_out = 0 if share <= 0 else max(1, int(round(share * len(keys))))
    n_out = min(n_out, len(keys) - 1)
    out = {k for k in keys[:n_out]}
    train = [r for k in keys if k not in out for r in by_unit[k]]
    held = [r for k in keys if k in out for r in by_unit[k]]
    return train, held


def _balanced(items: list, n: int | None, rng: np.random.Generator) -> list:
    """Up to ``n`` items (all balanced items when None), half of each ``.label`` where they allow."""
    by_label = {lab: [x for x in items if x.label == lab] for lab in (0, 1)}
    for lab in by_label:
        order = rng.permutation(len(by_label[lab]))
        by_label[lab] = [by_label[lab][i] for i in order]
    per = min(len(by_label[0]), len(by_label[1]))
    if n is not None:
        per = min(per, n // 2)
    picked = by_label[0][:per] + by_label[1][:per]
    return [picked[i] for i in rng.permutation(len(picked))]


def split_sources(sources: Sequence[Source], config: TuneConfig) -> tuple[
        dict[str, list[LabelledRow]], dict[str, list[LabelledRow]], dict[str, dict[str, int]]]:
    """Per source: the training pool and the held-out rows (whole units); plus the counts.

    A source of weight 0 is held out whole (evaluation only).
    """
    rng = np.random.default_rng(config.seed)
    pools: dict[str, list[LabelledRow]] = {}
    held: dict[str, list[LabelledRow]] = {}
    for s in sources:
        if s.weight == 0:
            pools[s.name], held[s.name] = [], list(s.rows)
        else:
            pools[s.name], held[s.name] = _split_units(s.rows, config.heldout, rng)
    counts = {s.name: {"rows": len(s.rows), "train_pool": len(pools[s.name]), "heldout": len(held[s.name]),
                       "skipped_long": 0, "chunked": 0} for s in sources}
    return pools, held, counts


def balance_examples(examples: dict[str, list[Example]], sources: Sequence[Source], config: TuneConfig,
                     counts: dict[str, dict[str, int]]) -> list[Example]:
    """Training examples: per source, equal counts per label and a share of ``rows`` by weight."""
    rng = np.random.default_rng([config.seed, 1])
    total_w = sum(s.weight for s in sources)
    out: list[Example] = []
    for s in sources:
        items = examples.get(s.name, [])
        quota = None if config.rows is None else int(round(config.rows * s.weight / total_w))
        if quota is None and s.weight < 1:
            quota = int(round(2 * min(sum(x.label for x in items), sum(1 - x.label for x in items)) * s.weight))
        picked = _balanced(items, quota, rng) if s.weight > 0 else []
        counts[s.name]["trained"] = len(picked)
        out.extend(picked)
    return out


def _evaluators(model: Any, config: TuneConfig) -> dict[str, Any]:
    """The evaluator that renders each task's rows."""
    chosen: dict[str, Any] = {}
    if config.evaluator:
        entry = registered_evaluator(config.evaluator.partition("+")[0]) if ":" not in config.evaluator else None
        task = entry.task if entry is not None else "fact-check"
        if task is None:
            raise ParameterError(f"Evaluator {config.evaluator!r} is registered without a task, so it renders no "
                                 "task's rows; register it with task=, or pass another --evaluator.")
        chosen[task] = build_evaluator(config.evaluator, model, task=task)
    for task in _TASKS:
        chosen.setdefault(task, build_evaluator(None, model, task=task))
    return chosen


def render_examples(model: Any, rows: Sequence[LabelledRow], source: str, config: TuneConfig,
                    counts: dict[str, int]) -> list[Example]:
    """Rows as ``Example``s; rows over ``max_tokens`` skipped or chunked, counted in ``counts``."""
    evaluators = _evaluators(model, config)
    out = []
    for row in rows:
        evaluator = evaluators[row.task]
        prompts = [tuple(model.tokenize(p)) for p in evaluator.prompts_for(row.to_request())]
        too_long = any(len(p) > config.max_tokens for p in prompts)
        if len(prompts) > 1 or too_long:
            if config.long_rows == "skip" or too_long:
                counts["skipped_long"] = counts.get("skipped_long", 0) + 1
                continue
            counts["chunked"] = counts.get("chunked", 0) + 1
        out.append(Example(row.id, source, int(row.label), tuple(prompts), tuple(evaluator.labels)))
    return out


def fits(model: Any, row: LabelledRow, config: TuneConfig) -> bool:
    """Whether ``row`` renders as one prompt within ``max_tokens`` (the rows scored during training)."""
    evaluator = _evaluators(model, config)[row.task]
    prompts = evaluator.prompts_for(row.to_request())
    return len(prompts) == 1 and len(model.tokenize(prompts[0])) <= config.max_tokens


def heldout_split(config: TuneConfig) -> dict[str, list[LabelledRow]]:
    """The rows a run with ``config`` holds out, per source (no model needed; the same split ``tune`` makes).

    For measuring a tuned judge on rows it never saw, e.g. with ``judgelab calibrate --set``.
    """
    sources = load_sources(config)
    _, held, _ = split_sources(sources, config)
    return held
