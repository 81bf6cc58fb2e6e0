"""``RelevancyEvaluator``: is a response to a query in line with the context?"""

from __future__ import annotations

from judgelab.evaluators._registry import registered_as
from judgelab.evaluators._spi import EvaluationRequest
from judgelab.evaluators._yesno import YesNoEvaluator

__all__ = ["RelevancyEvaluator", "DEFAULT_RELEVANCY_TEMPLATE"]

# Spring AI's RelevancyEvaluator default prompt.
DEFAULT_RELEVANCY_TEMPLATE = """Your task is to evaluate if the response for the query
is in line with the context information provided.

You have two options to answer. Either YES or NO.

Answer YES, if the response for the query
is in line with context information otherwise NO.

Query:
{query}

Response:
{response}

Context:
{context}

Answer:"""


@registered_as("relevancy", task="relevancy", default_for_task=True,
               description="Is the response in line with the query and the context? (Spring AI RelevancyEvaluator)")
class RelevancyEvaluator(YesNoEvaluator):
    """Is the response to the query in line with the context? Spring AI's ``RelevancyEvaluator``.

    Field roles: ``user_text`` is the **query**, ``data_list`` the **context**
    (documents joined by newlines), ``response_content`` the **response**.
    ``score`` is P(yes) over yes/no; long contexts are chunked and the best
    chunk counts, as in ``FactCheckingEvaluator``.

    A custom ``prompt_template`` must contain ``{query}``, ``{response}`` and
    ``{context}``; construction fails with a ``TemplateError`` naming the
    missing ones.
    """

    default_name = "relevancy"
    evidence_field = "context"
    required_placeholders = ("query", "response", "context")
    default_template = DEFAULT_RELEVANCY_TEMPLATE
    pass_word = "relevant"
    fail_word = "not relevant"

    def template_values(self, request: EvaluationRequest) -> dict[str, str]:
        return {
            "query": request.user_text,
            "response": request.response_content,
            "context": "\n".join(request.documents_text),
        }
