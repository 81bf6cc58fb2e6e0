"""Adapters that put judgelab's evaluators inside other evaluation harnesses.

``inspect_scorer`` turns any ``Evaluator`` into an Inspect AI scorer whose
value is the evaluator's probability (P(yes) for a fact check), with the
verdict and the judgment's metadata kept in the Inspect log. Inspect AI is
imported only when a scorer is made (``pip install inspect-ai``).
``recorded_answer`` is a solver that grades answers recorded elsewhere
(``metadata["submission"]``) without calling a model.
"""

from judgelab.harnesses._inspect import fact_check_request, inspect_scorer, recorded_answer

__all__ = ["fact_check_request", "inspect_scorer", "recorded_answer"]
