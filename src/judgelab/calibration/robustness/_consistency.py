"""Consistency probes: evaluators that ask the same thing another way.

Each probe is an ``Evaluator`` built from the calibration run's evaluator,
so a stress run scores it through the same resumable ``run`` as any row:

- ``NoulProbe``: a typed yes/no question over the evaluator's fields, asked
  as Q and as not-Q; a consistent judge has P(Q) + P(not Q) = 1.
- ``ChoiceProbe``: a typed choice over three verdicts, with the options in a
  given order; a consistent judge gives every order the same distribution.
- ``paraphrase_evaluators``: the evaluator with its instruction reworded
  (three paraphrases); a consistent judge gives the same P.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from judgelab.calibration.robustness._perturb import template_layout
from judgelab.engine import JudgeModel
from judgelab.errors import JudgelabError
from judgelab.evaluators import EvaluationRequest, EvaluationResponse, Evaluator, EvaluatorIdentity, config_hash
from judgelab.questions import Answer, Choice, ChoiceAnswer, Noul, NoulAnswer, ask_all

E = TypeVar("E", bound=Evaluator)

__all__ = [
    "CHOICE_OPTIONS",
    "ChoiceProbe",
    "NoulProbe",
    "PARAPHRASES",
    "choice_orders",
    "consistency_probes",
    "paraphrase_evaluators",
]

#: Verdict options of the permutation check, canonical order (the first is the pass).
CHOICE_OPTIONS = {
    "supported": "everything in the {judged} is backed by the {evidence}",
    "partially supported": "some of the {judged} is backed by the {evidence}, some is not",
    "not supported": "the {judged} is contradicted by, or missing from, the {evidence}",
}

#: Three rewordings of the instruction of each shipped template, by its placeholders.
PARAPHRASES: dict[frozenset[str], tuple[str, ...]] = {
    frozenset({"document", "claim"}): (
        "Read the document, then decide whether the claim follows from it.\n"
        'Reply "yes" when the document backs up the claim and "no" when it does not.\n'
        "Document:\n{document}\nClaim:\n{claim}",
        "Is the claim below consistent with the document below? Every part of the claim must be "
        "stated or implied by the document.\nAnswer yes or no.\nDocument:\n{document}\nClaim:\n{claim}",
        "You are checking facts. Given the document, is the following claim true according to it?\n"
        'Say "yes" if it is, "no" otherwise.\nDocument:\n{document}\nClaim:\n{claim}',
    ),
    frozenset({"query", "response", "context"}): (
        "Decide whether the response to the query agrees with the context information.\n"
        "Answer YES if it does and NO if it does not.\n\nQuery:\n{query}\n\nResponse:\n{response}\n\n"
        "Context:\n{context}\n\nAnswer:",
        "Given the context, is the response an answer to the query that the context backs up?\n"
        "Reply YES or NO.\n\nQuery:\n{query}\n\nResponse:\n{response}\n\nContext:\n{context}\n\nAnswer:",
        "Check the response below against the context. If the response answers the query in line "
        "with the context, say YES; otherwise say NO.\n\nQuery:\n{query}\n\nResponse:\n{response}\n\n"
        "Context:\n{context}\n\nAnswer:",
    ),
}


def _fields(evaluator: Evaluator, request: EvaluationRequest) -> tuple[dict[str, str], str, str]:
    """The evaluator's template values and the names of the judged and evidence fields."""
    lay = template_layout(evaluator)
    values_of = getattr(evaluator, "template_values", None)
    if callable(values_of):
        values = dict(values_of(request))
    else:
        values = {"document": "\n\n".join(request.documents_text) or request.user_text,
                  "response": request.response_content}
    if lay.judged_name not in values:
        values[lay.judged_name] = request.response_content
    return values, lay.judged_name, lay.evidence_name


def _model_of(evaluator: Evaluator) -> JudgeModel:
    model: JudgeModel | None = getattr(evaluator, "model", None)
    if model is None or not hasattr(model, "judge_many"):
        raise JudgelabError(
            f"The consistency checks ask the judge model directly; {type(evaluator).__name__} has no "
            "'model' with judge_many. Run the stress run with --no-consistency (consistency=False)."
        )
    return model


def _ask_probe(probe: NoulProbe | ChoiceProbe, requests: Iterable[EvaluationRequest]) -> tuple[JudgeModel, list[Answer | JudgelabError]]:
    """The probe's typed question over each request's fields, asked in one ``ask_all``: (model, answers)."""
    model = _model_of(probe.evaluator)
    items = []
    for req in requests:
        values, judged, evidence = _fields(probe.evaluator, req)
        items.append((values, probe.question(judged, evidence)))
    return model, ask_all(model, items, system=getattr(probe.evaluator, "system", None))


def _meta(model: JudgeModel) -> dict[str, object]:
    spec = getattr(model, "spec", None)  # a stand-in model may have no spec
    return {"model": getattr(model, "id", None), "spec_hash": getattr(spec, "spec_hash", None)}


#: Where the probes lived when stress runs first recorded their ``evaluator_hash``. Their identity
#: names that place, not the module they are in now, so runs written before calibration/ became
#: sub-packages still resume (the hash would otherwise change with every move).
_PROBE_KIND = "judgelab.calibration._stress_consistency."


def _probe_identity(probe: NoulProbe | ChoiceProbe, kind: str) -> EvaluatorIdentity:
    """What ``evaluator_identity`` gave a probe: its judge's spec hash and a hash of its kind and fingerprint."""
    spec_hash = getattr(getattr(getattr(probe, "model", None), "spec", None), "spec_hash", None)
    return EvaluatorIdentity(spec_hash if isinstance(spec_hash, str) else None,
                             config_hash(_PROBE_KIND + kind, {"fingerprint": probe.fingerprint()}))


@dataclass
class NoulProbe:
    """Asks "is the judged text supported by the evidence?" (or its negation) as a ``Noul``."""

    evaluator: Evaluator
    negated: bool = False
    name: str = "noul"

    def fingerprint(self) -> str:
        return f"noul negated={self.negated} over {type(self.evaluator).__name__}"

    def identity(self) -> EvaluatorIdentity:
        return _probe_identity(self, "NoulProbe")

    def question(self, judged: str, evidence: str) -> Noul:
        verb = "is not" if self.negated else "is"
        return Noul(instructions=f"Is it true that the `{judged}` {verb} supported by the `{evidence}`?")

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        model, answers = _ask_probe(self, requests)
        out = []
        for a in answers:
            assert isinstance(a, NoulAnswer)
            out.append(EvaluationResponse(
                passed=a.probability >= 0.5, score=a.probability,
                feedback=f"P(yes) = {a.probability:.3f}",
                metadata={**_meta(model), "probabilities": {"Yes": a.probability, "No": 1 - a.probability},
                          "prompt_tokens": a.prompt_tokens},
            ))
        return out

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        return self.evaluate_many([request])[0]


def choice_orders(n: int = 3) -> list[tuple[int, ...]]:
    """The option orders the permutation check asks: the ``n`` rotations (each option first once)."""
    base = list(range(n))
    return [tuple(base[k:] + base[:k]) for k in range(n)]


@dataclass
class ChoiceProbe:
    """Asks the three-verdict ``Choice`` with the options in ``order``; score = P(first canonical option)."""

    evaluator: Evaluator
    order: tuple[int, ...] = (0, 1, 2)
    options: Mapping[str, str] | None = None

    def fingerprint(self) -> str:
        return f"choice order={self.order} options={list(self.options or CHOICE_OPTIONS)}"

    def identity(self) -> EvaluatorIdentity:
        return _probe_identity(self, "ChoiceProbe")

    def question(self, judged: str, evidence: str) -> Choice:
        opts = dict(self.options or CHOICE_OPTIONS)
        labels = list(opts)
        shown = {labels[i]: opts[labels[i]].format(judged=judged, evidence=evidence) for i in self.order}
        return Choice(instructions=f"How well is the `{judged}` supported by the `{evidence}`?", options=shown)

    def evaluate_many(self, requests: Iterable[EvaluationRequest]) -> list[EvaluationResponse]:
        first = next(iter(self.options or CHOICE_OPTIONS))
        model, answers = _ask_probe(self, requests)
        out = []
        for a in answers:
            assert isinstance(a, ChoiceAnswer)
            p = float(a.probabilities[first])
            out.append(EvaluationResponse(
                passed=a.choice == first, score=p, feedback=f"{a.choice} ({a.confidence:.3f})",
                metadata={**_meta(model), "probabilities": dict(a.probabilities), "prompt_tokens": a.prompt_tokens},
            ))
        return out

    def evaluate(self, request: EvaluationRequest) -> EvaluationResponse:
        return self.evaluate_many([request])[0]


def paraphrase_evaluators(evaluator: E) -> list[E]:
    """Copies of ``evaluator`` with its instruction reworded (empty when no paraphrase fits its template)."""
    template = getattr(evaluator, "prompt_template", None)
    if not isinstance(template, str):
        return []
    from judgelab.calibration.robustness._perturb_base import _PLACEHOLDER

    names = frozenset(_PLACEHOLDER.findall(template))
    out = []
    for text in PARAPHRASES.get(names, ()):
        clone = copy.copy(evaluator)
        setattr(clone, "prompt_template", text)  # noqa: B010 - a template evaluator's attribute, not every Evaluator's
        out.append(clone)
    return out


def consistency_probes(evaluator: Evaluator, checks: Sequence[str] = ("noul", "choice", "paraphrase")
                       ) -> dict[str, Evaluator]:
    """``{probe key: evaluator}`` for the consistency checks that apply to ``evaluator``.

    Keys: ``noul-q``, ``noul-not-q``, ``choice-ABC`` per option order (digits
    of the order), ``paraphrase-1..3``. Checks that need the judge model are
    left out when the evaluator has none.
    """
    probes: dict[str, Evaluator] = {}
    has_model = hasattr(getattr(evaluator, "model", None), "judge_many")
    if "noul" in checks and has_model:
        probes["noul-q"] = NoulProbe(evaluator, negated=False)
        probes["noul-not-q"] = NoulProbe(evaluator, negated=True)
    if "choice" in checks and has_model:
        for order in choice_orders(len(CHOICE_OPTIONS)):
            probes["choice-" + "".join(str(i) for i in order)] = ChoiceProbe(evaluator, order=order)
    if "paraphrase" in checks:
        for k, clone in enumerate(paraphrase_evaluators(evaluator), start=1):
            probes[f"paraphrase-{k}"] = clone
    return probes
