"""Sentence-level decomposition of a fact check: each claim sentence against its best evidence windows.

A claim of several sentences is supported only if every sentence is; a
sentence is supported if some part of the document supports it. So each
claim sentence is checked against its ``top`` windows of ``window``
consecutive document sentences (chosen by content-word overlap,
``evidence_windows``), and the claim's raw score (before any calibrator) is
the minimum over sentences of the maximum over that sentence's windows. A failed check can then say
which sentence is unsupported and where the closest evidence is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from judgelab.evaluators._chunking import chunk_text, split_sentences
from judgelab.evaluators._evidence import evidence_windows

__all__ = ["DecompositionPlan", "SentenceCheck", "SentenceFinding", "plan_checks", "combine_checks"]


@dataclass(frozen=True)
class SentenceCheck:
    """One (claim sentence, evidence window) prompt of a plan."""

    sentence_index: int
    sentence: str
    window_start: int
    evidence: str


class SentenceFinding(TypedDict):
    """One claim sentence in ``metadata["sentences"]``: its raw score and its best evidence window."""

    sentence: str
    score: float
    evidence: str
    evidence_start_sentence: int


@dataclass(frozen=True)
class DecompositionPlan:
    """The prompts' inputs for one claim, in order."""

    sentences: tuple[str, ...]
    checks: tuple[SentenceCheck, ...]


def plan_checks(claim: str, document: str, *, window: int, top: int, max_tokens: int,
                count: Callable[[str], int]) -> DecompositionPlan:
    """Every claim sentence with its ``top`` evidence windows; a window over ``max_tokens`` is cut into chunks."""
    sentences = tuple(s.strip() for s in split_sentences(claim) if s.strip()) or (claim.strip(),)
    checks = []
    for i, sentence in enumerate(sentences):
        for w in evidence_windows(sentence, document, window=window, top=top):
            for piece in chunk_text(w.text, max_tokens, count):
                checks.append(SentenceCheck(i, sentence, w.start, piece))
    return DecompositionPlan(sentences, tuple(checks))


def combine_checks(plan: DecompositionPlan, raw_scores: Sequence[float]) -> tuple[float, int, list[SentenceFinding]]:
    """(claim raw score, index of the reported check, per-sentence findings).

    ``raw_scores`` are the checks' P(yes), in plan order. The claim's raw
    score is the weakest sentence's best window; the reported check is that
    window. Each finding has the sentence, its raw score (key ``score``, as
    ``metadata["sentences"]`` shows it), and its best evidence window.
    """
    findings: list[SentenceFinding] = []
    weakest, reported = 2.0, 0
    for i, sentence in enumerate(plan.sentences):
        # ties go to the earlier check: the window with more of the sentence's content words
        best_raw, neg_k = max((raw_scores[k], -k) for k, c in enumerate(plan.checks) if c.sentence_index == i)
        best_k = -neg_k
        findings.append({"sentence": sentence, "score": float(best_raw),
                         "evidence": plan.checks[best_k].evidence,
                         "evidence_start_sentence": plan.checks[best_k].window_start})
        if best_raw < weakest:
            weakest, reported = best_raw, best_k
    return float(weakest), reported, findings
