"""Self-preference bias: does the judge pass its own family's responses more often?

Follows the equal-opportunity reading of Wataoka et al. (2024): among rows
that should pass (label 1), compare the judge's pass rate on responses from
its own family ("self") with the rate on everybody else's; the same gap
among rows that should fail (label 0) shows leniency towards its own
mistakes.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from judgelab.calibration.analysis._bootstrap import Interval
from judgelab.calibration.data import GeneratorStatsRecord, SelfPreferenceRecord

__all__ = ["GeneratorStats", "SelfPreference", "is_self_generator", "self_preference"]

#: Fewer self (or other) rows than this, per label, and a gap is not concluded.
MIN_ROWS = 10


def is_self_generator(generator: str | None, patterns: Iterable[str]) -> bool:
    """Whether a generator name matches any fnmatch pattern (case-insensitive)."""
    if not generator:
        return False
    g = generator.lower()
    return any(fnmatch.fnmatchcase(g, p.lower()) for p in patterns)


GeneratorStats = GeneratorStatsRecord
"""Pass rates of one generator's responses (``pass_rate_pos``: P(pass | label 1), ``pass_rate_neg``: label 0)."""

SelfPreference = SelfPreferenceRecord
"""What ``self_preference`` returns: the ``self_preference`` of ``metrics.json`` (``SelfPreferenceRecord``).

``patterns`` are the generator patterns that counted as the judge's own;
``gap_pos`` and ``gap_neg`` are P(pass | label, self) - P(pass | label, other)
for label 1 and 0 with bootstrap intervals, ``p_value_pos`` and
``p_value_neg`` their two-sided permutation-test p-values (undefined when not
measurable); ``measurable`` is false when there were too few self or other
rows to conclude, and ``message`` says so in words; ``self`` and ``other``
pool the generators, ``by_generator`` lists them; ``n_unknown_generator``
rows named no generator and were left out.
"""


def _rate(x: npt.NDArray[np.float64]) -> float:
    return float(x.mean()) if x.size else math.nan


def _stats(name: str, is_self: bool, passed: npt.NDArray[np.float64], label: npt.NDArray[np.int_]) -> GeneratorStats:
    return GeneratorStatsRecord(
        generator=name,
        is_self=is_self,
        n=int(passed.size),
        n_pos=int((label == 1).sum()),
        n_neg=int((label == 0).sum()),
        pass_rate=_rate(passed),
        pass_rate_pos=_rate(passed[label == 1]),
        pass_rate_neg=_rate(passed[label == 0]),
    )


def _gap(passed: npt.NDArray[np.float64], is_self: npt.NDArray[np.bool_], rng: np.random.Generator, n_resamples: int, n_permutations: int,
         confidence: float) -> tuple[Interval, float]:
    """Gap in pass rate self - other, its bootstrap interval and permutation p-value."""
    ps, po = passed[is_self], passed[~is_self]
    if ps.size < MIN_ROWS or po.size < MIN_ROWS:
        est = _rate(ps) - _rate(po) if ps.size and po.size else math.nan
        return Interval(est, math.nan, math.nan, confidence), math.nan
    est = ps.mean() - po.mean()
    boot = (
        ps[rng.integers(0, ps.size, (n_resamples, ps.size))].mean(axis=1)
        - po[rng.integers(0, po.size, (n_resamples, po.size))].mean(axis=1)
    )
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    # Permutation test: shuffle who is "self" among these rows.
    k = ps.size
    perm = np.argsort(rng.random((n_permutations, passed.size)), axis=1)[:, :k]
    s_sum = passed.sum()
    self_means = passed[perm].sum(axis=1) / k
    other_means = (s_sum - passed[perm].sum(axis=1)) / (passed.size - k)
    null = self_means - other_means
    p = (1 + np.count_nonzero(np.abs(null) >= abs(est) - 1e-12)) / (1 + n_permutations)
    return Interval(float(est), float(lo), float(hi), confidence), float(p)


def _verdict(patterns: tuple[str, ...], gens: Sequence[str], self_stats: GeneratorStats,
             other_stats: GeneratorStats, gap_pos: Interval, p_pos: float) -> tuple[bool, str]:
    """Whether the gap is measurable on these rows, and the sentence the report prints."""
    counts = {
        "self, label 1": self_stats.n_pos,
        "self, label 0": self_stats.n_neg,
        "other, label 1": other_stats.n_pos,
        "other, label 0": other_stats.n_neg,
    }
    short = {k: v for k, v in counts.items() if v < MIN_ROWS}
    if not patterns:
        return False, "not measurable: the model spec names no self generators (pass --self-generators)."
    if not gens:
        return False, "not measurable on this set: no row names its generator."
    if short:
        return False, (
            "not measurable on this set: too few rows to conclude ("
            + ", ".join(f"{k}: {v}" for k, v in short.items())
            + f"; at least {MIN_ROWS} of each are needed)."
        )
    sig = p_pos < 0.05
    return True, (
        f"equal-opportunity gap (label 1) {gap_pos:+.3f} (p = {p_pos:.3g}): "
        + ("the judge passes its own family's correct responses at a different rate." if sig
           else "no significant difference at the 5% level.")
    )


def self_preference(
    passed: Sequence[bool] | npt.NDArray[np.bool_],
    labels: Sequence[int] | npt.NDArray[np.int_],
    generators: Sequence[str | None],
    patterns: Iterable[str],
    *,
    n_resamples: int = 2000,
    n_permutations: int = 2000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> SelfPreference:
    """Measure self-preference from verdicts, labels and generator names.

    Parameters
    ----------
    passed
        The judge's verdicts (at the shipped threshold).
    labels
        The true labels (1 = should pass).
    generators
        Who wrote each response (``None`` when unknown; such rows are left
        out and counted).
    patterns
        fnmatch patterns (case-insensitive) naming the judge's own family.
    n_resamples, n_permutations, confidence, seed
        Bootstrap and permutation-test settings.

    Returns
    -------
    SelfPreference
    """
    patterns = tuple(patterns)
    passed_a = np.asarray(passed, dtype=float)
    label_a = np.asarray(labels, dtype=int)
    all_gens = list(generators)
    known = np.array([bool(g) for g in all_gens], dtype=bool)
    n_unknown = int((~known).sum())
    passed_a, label_a = passed_a[known], label_a[known]
    gens = [g for g in all_gens if g]
    is_self = np.array([is_self_generator(g, patterns) for g in gens], dtype=bool)
    rng = np.random.default_rng(seed)
    by_gen = tuple(
        _stats(g, is_self_generator(g, patterns), passed_a[np.array([x == g for x in gens])], label_a[np.array([x == g for x in gens])])
        for g in sorted(set(gens))
    )
    self_stats = _stats("self", True, passed_a[is_self], label_a[is_self])
    other_stats = _stats("other", False, passed_a[~is_self], label_a[~is_self])
    pos, neg = label_a == 1, label_a == 0
    gap_pos, p_pos = _gap(passed_a[pos], is_self[pos], rng, n_resamples, n_permutations, confidence)
    gap_neg, p_neg = _gap(passed_a[neg], is_self[neg], rng, n_resamples, n_permutations, confidence)
    measurable, message = _verdict(patterns, gens, self_stats, other_stats, gap_pos, p_pos)
    return SelfPreferenceRecord(
        patterns=list(patterns),
        measurable=measurable,
        message=message,
        gap_pos=gap_pos,
        gap_neg=gap_neg,
        p_value_pos=p_pos,
        p_value_neg=p_neg,
        self=self_stats,
        other=other_stats,
        by_generator=list(by_gen),
        n_unknown_generator=n_unknown,
    )
