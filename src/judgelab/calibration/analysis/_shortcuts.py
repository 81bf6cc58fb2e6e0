"""Shortcut checks of a labelled set: can the label be read without the evidence?

A fact-check set teaches (or measures) reading the document only if the label
cannot be predicted from the claim alone, or from the document's length. The
claim-only baseline is a bag-of-words logistic regression on the claim (TF-IDF
of words and word pairs), scored out of fold with whole units (``LabelledRow.unit``),
and every copy of an identical claim, held out together; the length baselines score a row by its document's or its
claim's length in words. Each AUROC has a bootstrap interval; a set is free of
these shortcuts when every interval includes 0.5 or lies close to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis._bootstrap import Interval, bootstrap_interval
from judgelab.calibration.data import LabelledRow
from judgelab.errors import DataError

__all__ = ["ShortcutReport", "shortcut_baselines"]


@dataclass(frozen=True)
class ShortcutReport:
    """AUROC (with 95% interval) of predicting the label without reading the document against the claim."""

    n: int
    claim_only: Interval
    document_length: Interval
    claim_length: Interval

    def worst(self) -> float:
        """The largest distance of a baseline's AUROC from 0.5 (0 = no shortcut at all)."""
        return max(abs(i.estimate - 0.5) for i in (self.claim_only, self.document_length, self.claim_length))


def _auroc(y: npt.NDArray[np.int_], s: npt.NDArray[np.float64]) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, s)) if len(set(y.tolist())) == 2 else float("nan")


def _folds(rows: Sequence[LabelledRow]) -> list[int]:
    """Fold units joining rows that share a unit (``LabelledRow.unit``) or an identical claim (union-find).

    A claim that appears with both labels (over different documents, as in
    deletion-made sets) must not be learned in one fold and tested in another.
    """
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, r in enumerate(rows):
        for key in (("unit", r.unit), ("claim", " ".join(r.response.lower().split()))):
            if key in first:
                parent[find(i)] = find(first[key])
            else:
                first[key] = i
    return [find(i) for i in range(len(rows))]


def _claim_only_scores(rows: Sequence[LabelledRow], y: npt.NDArray[np.int_], folds: int, seed: int) -> npt.NDArray[np.float64]:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    texts = [r.response for r in rows]
    units = _folds(rows)
    scores = np.zeros(len(rows))
    splitter = GroupKFold(n_splits=min(folds, len(set(units))), shuffle=True, random_state=seed)
    for train, test in splitter.split(texts, y, units):
        if len(set(y[train].tolist())) < 2:
            scores[test] = 0.5
            continue
        vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
        x_train = vec.fit_transform([texts[i] for i in train])
        clf = LogisticRegression(max_iter=1000, C=1.0).fit(x_train, y[train])
        scores[test] = clf.predict_proba(vec.transform([texts[i] for i in test]))[:, 1]
    return scores


def shortcut_baselines(rows: Sequence[LabelledRow], *, folds: int = 5, seed: int = 0,
                       n_resamples: int = 1000) -> ShortcutReport:
    """Claim-only and length baselines of a fact-check set, as AUROC with bootstrap intervals.

    Raises
    ------
    DataError
        When the rows have one class or fewer than ``2 * folds`` units.
    """
    rows = [r for r in rows if r.task == "fact-check"]
    y = np.array([r.label for r in rows])
    if len(set(y.tolist())) < 2 or len(set(_folds(rows))) < 2 * folds:
        raise DataError(f"A shortcut check needs fact-check rows of both labels in at least {2 * folds} units "
                        f"(got {len(rows)} rows, labels {sorted(set(y.tolist()))}).")
    claim = _claim_only_scores(rows, y, folds, seed)
    doc_len = np.array([sum(len(d.split()) for d in r.documents) for r in rows], dtype=float)
    claim_len = np.array([len(r.response.split()) for r in rows], dtype=float)
    kw = {"n_resamples": n_resamples, "seed": seed}
    return ShortcutReport(
        n=len(rows),
        claim_only=bootstrap_interval(_auroc, y, claim, **kw),
        document_length=bootstrap_interval(_auroc, y, doc_len, **kw),
        claim_length=bootstrap_interval(_auroc, y, claim_len, **kw),
    )
