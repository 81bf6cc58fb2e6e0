"""Adapters that put judgelab's evaluators inside other evaluation harnesses.

``inspect_scorer`` turns any ``Evaluator`` into an Inspect AI scorer whose
value is the evaluator's probability (P(yes) for a fact check), with the
verdict and the judgment's metadata kept in the Inspect log. Inspect AI is
imported only when a scorer is made (``pip install inspect-ai``).
``recorded_answer`` is a solver that grades answers recorded elsewhere
(``metadata["submission"]``) without calling a model.

Inspect's own model-graded scorers (``model_graded_fact``, ``model_graded_qa``)
can use ``judgelab serve`` as their grader model when the labels are the grades
their pattern reads: ``INSPECT_GRADE_LABELS["default"]`` (``GRADE: C``,
``GRADE: I``), or ``INSPECT_GRADE_LABELS["partial_credit"]`` with
``partial_credit=True``; pass them per request
(``GenerateConfig(extra_body={"labels": [...]})``) or with ``serve --labels``.
A grading request whose labels cannot match is answered with a warning in the
server log and in the response's ``judgelab.warnings`` (docs/harnesses.md).
"""

from judgelab.harnesses._inspect import fact_check_request, inspect_scorer, recorded_answer

#: The labels Inspect AI's model-graded scorers read (their default grade pattern, ``GRADE: [CPI]``).
INSPECT_GRADE_LABELS: dict[str, tuple[str, ...]] = {
    "default": ("GRADE: C", "GRADE: I"),
    "partial_credit": ("GRADE: C", "GRADE: P", "GRADE: I"),
}

__all__ = ["INSPECT_GRADE_LABELS", "fact_check_request", "inspect_scorer", "recorded_answer"]
