"""Labelled sets by name: the starter set, a JSONL file, ``KIND:PATH`` to import, and rows by task."""

from __future__ import annotations

import importlib.resources
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from judgelab.calibration.data._contamination import Exclusion
from judgelab.calibration.data._deletion_negatives import deletion_pairs
from judgelab.calibration.data._importers import IMPORTERS, import_set
from judgelab.calibration.data._limit import spread_limit
from judgelab.calibration.data._number_negatives import number_pairs
from judgelab.calibration.data._partial_negatives import partial_pairs
from judgelab.calibration.data._rows import LabelledRow, load_rows
from judgelab.calibration.data._sentence_rows import sentence_rows
from judgelab.calibration.data._swap_negatives import swap_pairs
from judgelab.errors import DataError, JudgelabError

__all__ = ["default_set_path", "resolve_set", "rows_by_task", "GENERATORS"]

STARTER_SET = "starter.jsonl"


#: ``d2c:SET``: deletion negatives made from SET's consistent rows.
DELETION_PREFIX = "d2c"

#: ``PREFIX:SET``: rows a generator makes from SET's rows (any set spec, generators included: ``num:d2c:...``).
#: Each pair keeps its parent's unit, and an exclusion applies to SET's rows before the generator runs.
GENERATORS: dict[str, Callable[[Sequence[LabelledRow]], list[LabelledRow]]] = {
    DELETION_PREFIX: deletion_pairs,  # the claim's support deleted from the document
    "num": number_pairs,  # a figure, date, percentage or amount changed
    "swap": swap_pairs,  # an entity or a direction word swapped
    "partial": partial_pairs,  # a clause the document does not support added
    "sent": sentence_rows,  # one claim sentence against its decomposition window (labels from the parent's edit)
}


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
    checkout = Path(__file__).resolve().parents[4] / "calibration" / STARTER_SET
    tried.append(str(checkout))
    if checkout.is_file():
        return checkout
    raise DataError(
        "The starter set was not found (tried: " + ", ".join(tried) + "). Set JUDGELAB_DATA_DIR, "
        "reinstall judgelab, or pass a set with --set FILE."
    )


def resolve_set(spec: str | Path | Sequence[LabelledRow] | None, *, skip_invalid: bool = False,
                exclude: Exclusion | None = None) -> tuple[list[LabelledRow], str, int]:
    """Rows from a set argument: None (starter set), a JSONL path, ``KIND:PATH``, ``GENERATOR:SET`` or rows.

    ``GENERATOR:SET`` is the pairs a generator (``GENERATORS``) makes from the
    consistent rows of ``SET``, any set spec this function takes:
    ``d2c:`` deletion pairs (``deletion_pairs``), ``num:`` a changed figure
    (``number_pairs``), ``swap:`` a swapped entity or direction word
    (``swap_pairs``), ``partial:`` an unsupported clause added
    (``partial_pairs``); and ``sent:`` one claim
    sentence against the window decomposition reads for it (``sentence_rows``),
    labelled through the parent's label and edit.

    ``exclude`` drops every row that overlaps its reference rows (by any kind:
    ``OverlapIndex``) from the rows a set *reads*, before a generator makes
    rows from them: a generated pair is never built from an excluded parent.

    Returns
    -------
    rows, description, n_skipped
    """
    if spec is None:
        path = default_set_path()
        ls = load_rows(path, skip_invalid=skip_invalid)
        return _kept(list(ls.rows), str(path), exclude), str(path), len(ls.skipped)
    if not isinstance(spec, (str, Path)):
        return _kept(list(spec), "(rows)", exclude), "(rows)", 0
    text = str(spec)
    kind, sep, rest = text.partition(":")
    if sep and kind in GENERATORS:
        inner, _, skipped = resolve_set(rest, skip_invalid=skip_invalid, exclude=exclude)
        return GENERATORS[kind](inner), text, skipped
    if sep and kind in IMPORTERS:
        return _kept(import_set(kind, rest), text, exclude), text, 0
    if sep and not Path(text).exists() and len(kind) > 1:
        known = ", ".join(IMPORTERS)
        raise JudgelabError(f"Unknown data set kind {kind!r} in {text!r}; known kinds: {known}; generators "
                            f"(GENERATOR:SET, over any set): {', '.join(GENERATORS)}.")
    ls = load_rows(text, skip_invalid=skip_invalid)
    return _kept(list(ls.rows), text, exclude), text, len(ls.skipped)


def _kept(rows: list[LabelledRow], where: str, exclude: Exclusion | None) -> list[LabelledRow]:
    return rows if exclude is None else exclude.keep(rows, where)


def rows_by_task(
    rows: Sequence[LabelledRow], *, task: str | Sequence[str] | None = None, limit: int | None = None,
    seed: int | None = 0,
) -> dict[str, list[LabelledRow]]:
    """Rows grouped by task, in set order: only the tasks named by ``task``, at most ``limit`` rows each.

    What ``calibrate`` scores and what ``stress`` perturbs are chosen by this one function. ``limit``
    takes whole units spread over the set, both labels, seeded by ``seed`` (``spread_limit``), never
    the first rows.
    """
    tasks = [task] if isinstance(task, str) else list(task or [])
    by_task: dict[str, list[LabelledRow]] = {}
    for r in rows:
        if not tasks or r.task in tasks:
            by_task.setdefault(r.task, []).append(r)
    if limit is not None:
        by_task = {t: spread_limit(rs, limit, seed=seed) for t, rs in by_task.items()}
    return by_task
