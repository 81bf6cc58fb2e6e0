"""Training data: labelled rows per source, split by unit, balanced, rendered by the evaluators.

Rows come through calibration's ``resolve_set`` (any ``--set`` that
``calibrate`` accepts), with the ``exclude`` sets' overlapping rows dropped
before any generator runs. Each set is a *source*. Per source, whole units
(``LabelledRow.unit``: a document's rows, ``meta.pair`` edits, a deletion
pair with its parent) are held out, training rows that share text with any
held-out row are dropped, then the training rows are sampled with equal counts per label and a
share of the total proportional to the source's weight; a pair generator's
source (``PAIRED_KINDS``) is drawn in whole units, so an edited claim trains
beside the supported twin it was edited from. Every row is
rendered by the evaluator that serves its task, so a tuned judge is asked
exactly as it was taught.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np

from judgelab.calibration import Exclusion, LabelledRow, OverlapIndex, resolve_set
from judgelab.engine import JudgeModel
from judgelab.errors import DataError, ParameterError
from judgelab.evaluators import build_evaluator, registered_evaluator
from judgelab.tuning._config import TuneConfig, is_paired_source

__all__ = ["Example", "Source", "SourceCounts", "load_sources", "source_names", "split_sources", "balance_examples", "render_examples",
           "fits", "heldout_split", "exclusion_index"]

log = logging.getLogger(__name__)

_TASKS = ("fact-check", "relevancy")


class SourceCounts(TypedDict):
    """Per source: rows read, in the training pool, held out, dropped for overlapping a held-out row, excluded
    (by kind), skipped as too long and chunked (``split_sources``, ``render_examples``); and trained
    (``balance_examples``)."""

    rows: int
    train_pool: int
    heldout: int
    dropped_overlapping_heldout: int
    excluded: dict[str, int]
    skipped_long: int
    chunked: int
    trained: NotRequired[int]


@dataclass(frozen=True)
class Source:
    """One ``--set``: its name, rows and weight."""

    name: str
    spec: str
    rows: tuple[LabelledRow, ...]
    weight: float
    excluded: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Example:
    """A rendered training row: the token ids of each prompt (several when chunked), the label and its unit.

    ``unit`` is the row's ``LabelledRow.unit`` (a generated pair shares its parent's), which the
    whole-unit draw of pair sources reads; it defaults to the row id, a unit of its own.
    """

    row_id: str
    source: str
    label: int
    prompts: tuple[tuple[int, ...], ...]
    labels: tuple[str, str]
    unit: str = ""

    def __post_init__(self) -> None:
        if not self.unit:
            object.__setattr__(self, "unit", self.row_id)

    @property
    def n_tokens(self) -> int:
        return sum(len(p) for p in self.prompts)


def _source_name(spec: str, index: int) -> str:
    kind, sep, rest = spec.partition(":")
    stem = Path(rest if sep else spec).stem or f"set{index}"
    return f"{kind}:{stem}" if sep and len(kind) > 1 else stem


def source_names(specs: Sequence[str]) -> list[str]:
    """The name a tuning run gives each set spec, in order: ``d2c:fib`` for ``d2c:data/fib.jsonl``.

    A name that repeats gets ``#2``, ``#3``, ... These names key ``PROVENANCE.json``'s counts and,
    through ``heldout_file_name``, the run's held-out files, so a script reading a run derives them
    here rather than by position.
    """
    names: list[str] = []
    seen: Counter[str] = Counter()
    for i, spec in enumerate(specs):
        name = _source_name(spec, i)
        seen[name] += 1
        names.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return names


def exclusion_index(config: TuneConfig) -> OverlapIndex:
    """The rows of every ``exclude`` set, indexed for every kind of overlap (``OverlapIndex``)."""
    rows: list[LabelledRow] = []
    for spec in config.exclude:
        rows.extend(resolve_set(spec)[0])
    return OverlapIndex(rows)


def load_sources(config: TuneConfig) -> list[Source]:
    """Read every set; rows of tasks the yes/no evaluators cannot score, or overlapping an excluded row, are left out.

    Exclusion (``config.exclude``) drops every row that shares a row, a
    document, a claim, a long sentence or a near-duplicate document with a
    row of the excluded sets, and it is applied to the rows a set reads
    *before* a generator (``d2c:``) makes rows from them. What each source
    lost, by kind, is in ``Source.excluded``.

    Raises
    ------
    DataError
        When a set has no scorable rows, or only one class.
    """
    sources = []
    index = exclusion_index(config)
    for spec, weight, name in zip(config.sets, config.source_weights(), source_names(config.sets)):
        exclusion = Exclusion(index)
        rows, desc, _ = resolve_set(spec, exclude=exclusion)
        kept = tuple(r for r in rows if r.task in _TASKS)
        if len(kept) < len(rows):
            log.info("set %s: %d of %d rows left out (other tasks)", desc, len(rows) - len(kept), len(rows))
        if not kept:
            raise DataError(f"Set {desc} has no fact-check or relevancy rows to tune on "
                            f"({len(rows)} rows of other tasks or overlapping the excluded sets).", path=str(spec))
        classes = {r.label for r in kept}
        if len(classes) < 2:
            raise DataError(f"Set {desc} has only label {classes.pop()} in its {len(kept)} rows; tuning "
                            "needs both passing (1) and failing (0) rows in every set.", path=str(spec))
        excluded: Counter[str] = Counter()
        for by_kind in exclusion.dropped.values():
            excluded.update(by_kind)
        sources.append(Source(name, spec, kept, float(weight), dict(excluded)))
    return sources


def _unit_draw(seed: int, unit: str) -> float:
    """A number in [0, 1) fixed by the seed and the unit alone, whatever source the unit's rows are in."""
    digest = hashlib.blake2b(f"{seed}\x00{unit}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def _split_units(rows: Sequence[LabelledRow], share: float, seed: int) -> tuple[list[LabelledRow], list[LabelledRow]]:
    """(train, held-out) rows, whole units to one side; at least one unit held out when share > 0.

    A unit is held out when its draw (``_unit_draw``) is under ``share``, so
    the decision depends on the unit and the seed only: a deletion pair,
    which carries its parent's unit, is held out exactly when its parent is.
    """
    by_unit: dict[str, list[LabelledRow]] = defaultdict(list)
    for r in rows:
        by_unit[r.unit].append(r)
    draws = {k: _unit_draw(seed, k) for k in by_unit}
    out = {k for k, d in draws.items() if d < share}
    if share > 0 and not out and len(by_unit) > 1:
        out = {min(draws, key=lambda k: (draws[k], k))}
    if len(out) == len(by_unit) and len(by_unit) > 1:
        out.discard(max(draws, key=lambda k: (draws[k], k)))
    keys = sorted(by_unit)
    train = [r for k in keys if k not in out for r in by_unit[k]]
    held = [r for k in keys if k in out for r in by_unit[k]]
    return train, held


def _balanced(items: list[Example], n: int | None, rng: np.random.Generator) -> list[Example]:
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


def _balanced_units(items: list[Example], n: int | None, rng: np.random.Generator) -> list[Example]:
    """Like ``_balanced``, but whole units: each unit gives as many rows of each label as it has of the rarer one.

    A pair generator writes the supported twin and its edit into the parent's unit, so drawing units
    keeps them together; a unit left with one label (its twin skipped as too long) gives nothing.
    Units are taken in a seeded order until ``n // 2`` rows of each label are drawn.
    """
    by_unit: dict[str, dict[int, list[Example]]] = defaultdict(lambda: {0: [], 1: []})
    for x in items:
        by_unit[x.unit][x.label].append(x)
    keys = sorted(by_unit)
    per = None if n is None else n // 2
    picked: list[Example] = []
    taken = 0
    for i in rng.permutation(len(keys)):
        if per is not None and taken >= per:
            break
        rows = by_unit[keys[i]]
        k = min(len(rows[0]), len(rows[1]))
        if per is not None:
            k = min(k, per - taken)
        if k == 0:
            continue
        picked += rows[0][:k] + rows[1][:k]
        taken += k
    return [picked[i] for i in rng.permutation(len(picked))]


def split_sources(sources: Sequence[Source], config: TuneConfig) -> tuple[
        dict[str, list[LabelledRow]], dict[str, list[LabelledRow]], dict[str, SourceCounts]]:
    """Per source: the training pool and the held-out rows (whole units); plus the counts.

    A source of weight 0 is held out whole (evaluation only). Then every
    training row that overlaps a held-out row of *any* source (``OverlapIndex``:
    a row, document, claim, long sentence or near-duplicate document) leaves
    the pool, so that no held-out row shares text with a training row.
    """
    pools: dict[str, list[LabelledRow]] = {}
    held: dict[str, list[LabelledRow]] = {}
    for s in sources:
        if s.weight == 0:
            pools[s.name], held[s.name] = [], list(s.rows)
        else:
            pools[s.name], held[s.name] = _split_units(s.rows, config.heldout, config.heldout_seed)
    index = OverlapIndex(r for rows in held.values() for r in rows)
    counts: dict[str, SourceCounts] = {}
    for s in sources:
        before = len(pools[s.name])
        if len(index) and pools[s.name]:
            pools[s.name] = Exclusion(index).keep(pools[s.name], s.name)
        counts[s.name] = {"rows": len(s.rows), "train_pool": len(pools[s.name]), "heldout": len(held[s.name]),
                          "dropped_overlapping_heldout": before - len(pools[s.name]),
                          "excluded": dict(s.excluded), "skipped_long": 0, "chunked": 0}
    return pools, held, counts


def balance_examples(examples: dict[str, list[Example]], sources: Sequence[Source], config: TuneConfig,
                     counts: dict[str, SourceCounts]) -> list[Example]:
    """Training examples: per source, equal counts per label and a share of ``rows`` by weight.

    A pair generator's source (``PAIRED_KINDS``) is drawn in whole units (``_balanced_units``), every
    other source row by row, so the recipes without generated pairs keep the rows they drew before.
    """
    rng = np.random.default_rng([config.seed, 1])
    total_w = sum(s.weight for s in sources)
    out: list[Example] = []
    for s in sources:
        items = examples.get(s.name, [])
        quota = None if config.rows is None else int(round(config.rows * s.weight / total_w))
        if quota is None and s.weight < 1:
            quota = int(round(2 * min(sum(x.label for x in items), sum(1 - x.label for x in items)) * s.weight))
        draw = _balanced_units if is_paired_source(s.spec) else _balanced
        picked = draw(items, quota, rng) if s.weight > 0 else []
        counts[s.name]["trained"] = len(picked)
        out.extend(picked)
    return out


def _evaluators(model: JudgeModel, config: TuneConfig) -> dict[str, Any]:
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


def render_examples(model: JudgeModel, rows: Sequence[LabelledRow], source: str, config: TuneConfig,
                    counts: SourceCounts) -> list[Example]:
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
        out.append(Example(row.id, source, int(row.label), tuple(prompts), tuple(evaluator.labels), row.unit))
    return out


def fits(model: JudgeModel, row: LabelledRow, config: TuneConfig) -> bool:
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
