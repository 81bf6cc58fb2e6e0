"""Run-to-run stability: a sample of each cell's test rows rescored ``repeats`` times, and what moved.

The sample is the same rows for every judge (seeded by the bench's seed and the row id alone). Each
repeat is its own resumable file beside the cell's scores (``repeat-K.jsonl``); the first scoring in
``scores.jsonl`` is the reference. A served judge that samples, batches differently or runs on
nondeterministic kernels shows here; an in-process llama.cpp judge on one machine reads the same
logits every time.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from judgelab.bench._measure import CellScores
from judgelab.bench._records import Stability
from judgelab.calibration.data import LabelledRow, read_scores

__all__ = ["repeat_path", "repeat_sample", "stability_of"]


def repeat_sample(rows: Sequence[LabelledRow], split: Mapping[str, str], n: int, seed: int) -> list[LabelledRow]:
    """``n`` test rows in an order seeded by ``seed`` and each row's id (the same rows for every judge)."""
    test = [r for r in rows if split[r.id] == "test"]
    return sorted(test, key=lambda r: hashlib.sha256(f"{seed}\x00{r.id}".encode()).hexdigest())[:n]


def repeat_path(cell_scores_path: Path, k: int) -> Path:
    return cell_scores_path.with_name(f"repeat-{k}.jsonl")


def stability_of(cell: CellScores, cell_scores_path: Path, *, repeats: int, n_rows: int, seed: int) -> Stability | None:
    """Flip rate at the cell's threshold and the largest score change over the repeats; ``None`` without repeats."""
    if repeats < 1:
        return None
    sample = [r.id for r in repeat_sample(cell.bench_set.by_task[cell.task], cell.bench_set.split[cell.task],
                                          n_rows, seed) if r.id in cell.scores]
    flips, pairs, changes, failed = 0, 0, [], 0
    for k in range(1, repeats + 1):
        path = repeat_path(cell_scores_path, k)
        again = {r.id: r for r in read_scores(path)} if path.exists() else {}
        for i in sample:
            rec = again.get(i)
            if rec is None or not rec.ok or rec.score is None:
                failed += 1
                continue
            first = cell.scores[i]
            pairs += 1
            flips += (rec.score >= cell.threshold) != (first >= cell.threshold)
            changes.append(abs(rec.score - first))
    return Stability(judge=cell.judge, column=cell.column, n_rows=len(sample), repeats=repeats,
                     flip_rate=round(flips / pairs, 6) if pairs else None,
                     max_score_change=round(max(changes), 6) if changes else None, n_failed=failed)
