"""``Jury``: several judges (ideally of different model families) asked the same thing, their verdicts combined.

``combine="mean-logit"`` averages the jurors' scores on the logit scale (a
geometric pooling of their odds) and passes at ``threshold``;
``combine="vote"`` scores the share of jurors that passed, and passes on a
strict majority (a tie fails). ``combine_scores`` is the same rule on
arrays, so a jury can be scored from its members' saved runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.engine import JudgeModel
from judgelab.errors import ParameterError
from judgelab.evaluators._detail import JudgmentDetail, judgment_detail
from judgelab.evaluators._identity import EvaluatorIdentity, config_hash, evaluator_identity
from judgelab.evaluators._spi import BaseEvaluator, EvaluationRequest, EvaluationResponse, Evaluator, evaluate_many
from judgelab.evaluators.cascade import stage_name, stage_template_hash

__all__ = ["COMBINE_RULES", "Jury", "combine_scores"]

Combine = Literal["mean-logit", "vote"]
COMBINE_RULES = ("mean-logit", "vote")
_EPS = 1e-6


def combine_scores(scores: ArrayLike, passed: ArrayLike | None = None, combine: Combine = "mean-logit") -> npt.NDArray[np.float64]:
    """The jury's score of every row from its members' ``(n_members, n_rows)`` scores.

    ``mean-logit``: ``sigmoid(mean(logit(clip(p))))``; ``vote``: the share
    of members whose ``passed`` is true (``passed`` defaults to ``score >= 0.5``).
    """
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    if combine == "mean-logit":
        p = np.clip(s, _EPS, 1 - _EPS)
        z = np.log(p / (1 - p)).mean(axis=0)
        combined: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-z))
        return combined
    if combine == "vote":
        v = (s >= 0.5) if passed is None else np.atleast_2d(np.asarray(passed, dtype=bool))
        share: npt.NDArray[np.float64] = v.mean(axis=0)
        return share
    raise ParameterError(f"The 'combine' parameter of Jury must be one of {', '.join(COMBINE_RULES)}. Got {combine!r} instead.")


class Jury(BaseEvaluator):
    """Ask every juror, combine their scores.

    Parameters
    ----------
    jurors
        The evaluators (at least two).
    combine
        ``"mean-logit"`` (default) or ``"vote"``.
    threshold
        Pass threshold on the combined score (``mean-logit``; a vote passes on a strict majority).
    names
        Names of the jurors in metadata (default: their model ids).
    """

    name = "jury"

    def __init__(self, jurors: Sequence[Evaluator], combine: Combine = "mean-logit", *, threshold: float = 0.5,
                 names: Sequence[str] | None = None) -> None:
        self.jurors = list(jurors)
        if len(self.jurors) < 2:
            raise ParameterError(f"A Jury needs at least two jurors; got {len(self.jurors)}.")
        if combine not in COMBINE_RULES:
            raise ParameterError(f"The 'combine' parameter of Jury must be one of {', '.join(COMBINE_RULES)}. "
                                 f"Got {combine!r} instead.")
        self.combine = combine
        self.threshold = float(threshold)
        self.names = list(names) if names else [stage_name(j) for j in self.jurors]
        self.owned: list[JudgeModel] = []  # models this jury loaded (the registry's); closed by close()

    def close(self) -> None:
        """Close the models this jury loaded itself (none unless built by the registry)."""
        for model in self.owned:
            model.close()
        self.owned = []

    @property
    def template_hash(self) -> str:
        """A hash of the jurors' template hashes and the combination rule."""
        return config_hash("jury-template", {"jurors": [stage_template_hash(j) for j in self.jurors],
                                             "combine": self.combine})

    def identity(self) -> EvaluatorIdentity:
        """No single spec hash; the evaluator hash covers every juror's identity and the rule."""
        ids = [evaluator_identity(j) for j in self.jurors]
        return EvaluatorIdentity(None, config_hash("jury", {"jurors": [(i.spec_hash, i.evaluator_hash) for i in ids],
                                                            "combine": self.combine, "threshold": self.threshold}))

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        requests = list(requests)
        answers = [evaluate_many(j, requests) for j in self.jurors]
        scores = np.array([[float(r.score) for r in a] for a in answers]).reshape(len(self.jurors), len(requests))
        passed = np.array([[bool(r.passed) for r in a] for a in answers]).reshape(scores.shape)
        combined = combine_scores(scores, passed, self.combine)
        return [self._response([a[i] for a in answers], float(combined[i])) for i in range(len(requests))]

    def _response(self, votes: list[EvaluationResponse], score: float) -> EvaluationResponse:
        passed = score > 0.5 if self.combine == "vote" else score >= self.threshold
        jurors, tokens = [], 0
        for name, r in zip(self.names, votes):
            d = judgment_detail(r)
            tokens += int(d.prompt_tokens or 0)
            jurors.append({"name": name, "score": float(r.score), "passed": bool(r.passed), "model": d.model,
                           "prompt_tokens": d.prompt_tokens})
        n_pass = sum(bool(r.passed) for r in votes)
        threshold = self.threshold if self.combine != "vote" else 0.5
        meta: dict[str, object] = {"evaluator": self.name, "combine": self.combine, "jurors": jurors,
                                   "prompt_tokens": tokens, "threshold": threshold}
        feedback = (f"{'PASS' if passed else 'FAIL'}: jury score {score:.3f} ({self.combine}); "
                    f"{n_pass} of {len(jurors)} jurors passed.")
        detail = JudgmentDetail(evaluator=self.name, raw_score=score, criteria={name: float(r.score) for name, r in zip(self.names, votes)},
                                threshold=threshold, prompt_tokens=tokens)
        return EvaluationResponse(passed=bool(passed), score=score, feedback=feedback, metadata=meta, detail=detail)
