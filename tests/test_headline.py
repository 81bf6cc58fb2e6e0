"""The headline, held to a floor: the shipped judge ranks clean document-level rows; the base model does not.

``tests/data/headline_rows.jsonl`` is a fixed, committed subset of the starter set's *test* split
(``benchmarks/build_starter_set.py`` writes both): 80 fact-check rows with documents, balanced, 18 BEGIN
CMU-DoG (Wikipedia film plots of ~140 words), 38 FEVER-NLI (Wikipedia evidence of ~80 words) and 24
BEGIN Wizard of Wikipedia (~26 words), whose text may be redistributed (CC BY-SA 3.0; every row names
its licence). No row shares a row, document, claim, 60-character sentence or near-duplicate
document with the shipped adapter's training rows (``tests/test_overlap.py`` checks the whole starter
set against the shipped recipe's pool). The rows are scored as ``judgelab calibrate`` scores them (the
task's default evaluator, documents in the spec's chunks), and the AUROC must clear
``MIN_HEADLINE_AUROC``, which the base model fails: a regression in document-level judging fails CI.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from judgelab.calibration import load_rows
from judgelab.evaluators import build_evaluator, evaluate_many

ROWS = Path(__file__).parent / "data" / "headline_rows.jsonl"

#: Measured on these 80 rows (llama.cpp, 2 threads) on a 2-core Intel Xeon with AVX-512 and AMX (2026-12-07,
#: ``benchmarks/headline_floor.py``, ``benchmarks/results/headline/xeon-avx512.json``): the shipped
#: gemma-3-270m-judge 0.918, the base gemma-3-270m 0.594. The floor sits between them; the base's margin
#: (0.026) is the smaller one, about 2.5 times the 0.010 by which an AVX2 and an AVX-512 build moved the base's
#: figure on the earlier rows (0.494 and 0.484).
MIN_HEADLINE_AUROC = 0.70
#: A judge at chance is near 0.5; the base model must stay under this, or the rows have stopped
#: telling a tuned judge from an untuned one.
MAX_BASE_AUROC = 0.62


def _auroc(model) -> float:
    rows = list(load_rows(ROWS).rows)
    evaluator = build_evaluator(None, model, task="fact-check")
    scores = [r.score for r in evaluate_many(evaluator, [row.to_request() for row in rows])]
    return float(roc_auc_score(np.array([row.label for row in rows]), np.array(scores)))


def test_the_rows_are_the_documented_subset():
    rows = list(load_rows(ROWS).rows)
    assert len(rows) == 80 and sum(r.label for r in rows) == 40
    assert {r.split for r in rows} == {"test"} and all(r.licence for r in rows)
    assert {r.group for r in rows} == {"begin-cmu", "fever-nli", "begin-wow"}


@pytest.mark.slow
def test_the_shipped_judge_clears_the_headline_floor(default_judge):
    auroc = _auroc(default_judge)
    assert auroc >= MIN_HEADLINE_AUROC, f"document-level AUROC {auroc:.3f} under the floor {MIN_HEADLINE_AUROC}"


@pytest.mark.slow
def test_the_base_model_does_not(judge_model):
    auroc = _auroc(judge_model)
    assert auroc < MAX_BASE_AUROC, f"the base model reaches {auroc:.3f}: the floor no longer separates the judges"
