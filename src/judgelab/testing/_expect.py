"""``assert_passes`` / ``assert_fails``: judge assertions that say why.

On failure the message has the score and the threshold (or the policy and its
decision), the feedback, the per-chunk scores, the model and its spec hash.
With a policy, an abstention is neither: the test is skipped with the band
(or failed under ``--judgelab-abstain=fail``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from judgelab.evaluators import EvaluationResponse

__all__ = ["assert_fails", "assert_passes", "band", "decision_of", "describe", "set_abstain_mode"]

_ABSTAIN_MODE = {"mode": "skip"}


def set_abstain_mode(mode: str) -> None:
    """``"skip"`` or ``"fail"``: what an abstention does (the plugin sets it from ``--judgelab-abstain``)."""
    _ABSTAIN_MODE["mode"] = mode


def _meta(response: EvaluationResponse) -> dict[str, object]:
    return dict(getattr(response, "metadata", None) or {})


def decision_of(response: EvaluationResponse) -> str:
    """``"pass"``, ``"fail"`` or ``"abstain"``: the policy's decision, else the threshold's."""
    decision = _meta(response).get("decision")
    if isinstance(decision, str) and decision in ("pass", "fail", "abstain"):
        return decision
    return "pass" if response.passed else "fail"


def _num(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def band(response: EvaluationResponse) -> str:
    """``"[lower, upper]"`` of the response's policy, or ``""``."""
    policy = _meta(response).get("policy")
    if not isinstance(policy, dict):
        return ""
    return f"[{_num(policy.get('lower'))}, {_num(policy.get('upper'))}]"


def describe(response: EvaluationResponse) -> str:
    """The lines a failed judge assertion shows: score and threshold or policy, feedback, chunks, model."""
    meta = _meta(response)
    decision = decision_of(response)
    if meta.get("decision") is not None:
        found = meta.get("policy")
        policy = found if isinstance(found, dict) else {}
        rule = (f"policy {decision.upper()}: band {band(response)} (fail below, pass at or above), "
                f"{policy.get('risk', 'error')} <= {_num(meta.get('alpha'))}, calibrated on {meta.get('n')} rows")
    else:
        threshold = meta.get("threshold")
        sign = ">=" if response.passed else "<"
        rule = f"threshold {_num(threshold)}: score {sign} threshold" if threshold is not None else "no threshold recorded"
    chunks = meta.get("chunks")
    lines = [
        f"score:     {_num(response.score)}  ({rule})",
        f"feedback:  {response.feedback}",
    ]
    if isinstance(chunks, (list, tuple)) and chunks:
        lines.append(f"chunks:    {', '.join(_num(c) for c in chunks)}"
                     + (f"  (best: chunk {max(range(len(chunks)), key=lambda i: chunks[i]) + 1})" if len(chunks) > 1 else ""))
    criteria = meta.get("criteria")
    if isinstance(criteria, dict) and criteria:
        lines.append(f"criteria:  {criteria}")
    lines.append(f"model:     {meta.get('model')}  spec {meta.get('spec_hash')}"
                 + (f"  evaluator {meta['evaluator']}" if meta.get("evaluator") else ""))
    return "\n".join(lines)


def _abstained(response: EvaluationResponse) -> None:
    __tracebackhide__ = True
    reason = f"judge abstained: P={response.score:.3f} inside the band {band(response)}"
    if _ABSTAIN_MODE["mode"] == "fail":
        pytest.fail(f"{reason} (--judgelab-abstain=fail)\n{describe(response)}", pytrace=False)
    pytest.skip(reason)


def assert_passes(response: EvaluationResponse, msg: str | None = None) -> None:
    """Assert that the judge passed ``response`` (an ``EvaluationResponse``).

    A policy's abstention skips the test (or fails it under
    ``--judgelab-abstain=fail``); a fail raises ``AssertionError`` with
    ``describe(response)``.
    """
    __tracebackhide__ = True
    _expect_decision(response, "pass", msg)


def assert_fails(response: EvaluationResponse, msg: str | None = None) -> None:
    """Assert that the judge failed ``response``; the mirror of ``assert_passes``."""
    __tracebackhide__ = True
    _expect_decision(response, "fail", msg)


def _expect_decision(response: EvaluationResponse, wanted: str, msg: str | None) -> None:
    """Skip (or fail) on an abstention; ``AssertionError`` with ``describe(response)`` unless ``wanted``."""
    __tracebackhide__ = True
    decision = decision_of(response)
    if decision == "abstain":
        _abstained(response)
    if decision != wanted:
        raise AssertionError(f"{msg + ': ' if msg else ''}the judge did not {wanted} it ({decision.upper()})\n"
                             f"{describe(response)}")
