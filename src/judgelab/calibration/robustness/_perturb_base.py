"""The parts every stress perturbation shares: ``Perturbation``, the template's layout, evidence helpers.

``TemplateLayout`` says where the judged text and the evidence sit in an
evaluator's template, so attacks can be written in the words the prompt uses.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from judgelab.calibration.data import LabelledRow

__all__ = ["Perturbation", "TemplateLayout", "evidence_of", "template_layout", "with_documents"]

Kind = Literal["attack", "evidence", "benign"]
Position = Literal["start", "end", "-"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_JUDGED_PROBE = "\x00judged\x00"
_EVIDENCE_PROBE = "\x00evidence\x00"


@dataclass(frozen=True)
class TemplateLayout:
    """Where the judged text and the evidence sit in an evaluator's template.

    ``judged_header`` / ``evidence_header`` are the last non-blank line before
    each placeholder (``"Claim:"``), ``answer_cue`` the text after the last
    placeholder (``"Answer:"``) or ``"Answer:"`` when the template has none,
    and ``pass_label`` the word the evaluator reads as a pass.
    """

    judged_header: str = "Response:"
    evidence_header: str = "Document:"
    answer_cue: str = "Answer:"
    pass_label: str = "Yes"
    judged_name: str = "response"
    evidence_name: str = "document"


def _header_before(template: str, placeholder: str) -> str | None:
    at = template.find("{" + placeholder + "}")
    if at < 0:
        return None
    before = template[:at]
    lines = [ln.strip() for ln in before.splitlines() if ln.strip()]
    if not lines:
        return None
    last = lines[-1]
    # "Document: {document}" puts the header on the placeholder's own line
    return last if len(last) <= 40 else None


def template_layout(evaluator: object) -> TemplateLayout:
    """The ``TemplateLayout`` of an evaluator (defaults when it has no template).

    Works for evaluators with ``prompt_template`` and ``template_values``
    (judgelab's yes/no evaluators and their subclasses): the judged field is
    the placeholder that receives ``response_content``, the evidence field
    the one that receives the documents.
    """
    from judgelab.evaluators import Document, EvaluationRequest

    template = getattr(evaluator, "prompt_template", None)
    values_of = getattr(evaluator, "template_values", None)
    labels = getattr(evaluator, "labels", ("Yes", "No"))
    pass_label = str(labels[0]) if labels else "Yes"
    if not isinstance(template, str) or not callable(values_of):
        return TemplateLayout(pass_label=pass_label)
    try:
        values = values_of(EvaluationRequest(user_text=_EVIDENCE_PROBE, data_list=(Document(_EVIDENCE_PROBE),),
                                             response_content=_JUDGED_PROBE))
    except Exception:  # an evaluator that needs more than a request: defaults
        return TemplateLayout(pass_label=pass_label)
    judged = next((k for k, v in values.items() if v == _JUDGED_PROBE), None)
    evidence = getattr(evaluator, "evidence_field", None)
    if evidence not in values:
        evidence = next((k for k, v in values.items() if _EVIDENCE_PROBE in str(v) and k != judged), None)
    names = _PLACEHOLDER.findall(template)
    tail = template[template.rfind("}") + 1:].strip() if names else ""
    default = TemplateLayout()
    return TemplateLayout(
        judged_header=(_header_before(template, judged) if judged else None) or default.judged_header,
        evidence_header=(_header_before(template, evidence) if evidence else None) or default.evidence_header,
        answer_cue=tail if tail and len(tail) <= 40 else default.answer_cue,
        pass_label=pass_label,
        judged_name=judged or default.judged_name,
        evidence_name=evidence or default.evidence_name,
    )


Apply = Callable[[LabelledRow, TemplateLayout, random.Random], "LabelledRow | None"]


@dataclass(frozen=True)
class Perturbation:
    """A named, seeded rewrite of a row.

    ``kind`` is ``attack`` (the judged text), ``evidence`` (injected into the
    document) or ``benign``; ``position`` is where the text goes. ``apply``
    returns the perturbed row or ``None`` when the perturbation does not apply
    (e.g. reordering a row with one document).
    """

    name: str
    family: str
    kind: Kind
    position: Position
    apply: Apply = field(repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.name if self.position == "-" else f"{self.name}@{self.position}"


def with_documents(row: LabelledRow, docs: list[str]) -> LabelledRow:
    """``row`` with its evidence replaced (``documents``, or ``user_text`` for a row without documents)."""
    if row.documents:
        return row.model_copy(update={"documents": docs})
    return row.model_copy(update={"user_text": docs[0] if docs else row.user_text})


def evidence_of(row: LabelledRow) -> list[str]:
    """A copy of the row's evidence: its documents, else its user text (empty when it has neither)."""
    return list(row.documents) if row.documents else ([row.user_text] if row.user_text else [])
