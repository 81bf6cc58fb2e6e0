"""``RelevancyEvaluator``: is a response to a query in line with the context?

The question is Spring AI's, and so is its default prompt. A judge whose model spec holds a
``[tasks.relevancy]`` prompt (the tuned ``gemma-3-270m-judge`` does: the relevancy question asked as
the fact-check question it was tuned on) is asked that prompt instead, whether the evaluator is built
as ``RelevancyEvaluator(model)`` or by the name ``relevancy``; ``relevancy-spring-ai`` asks Spring AI's
prompt word for word on any judge.
"""

from __future__ import annotations

from typing import Unpack

from judgelab.engine import JudgeModel
from judgelab.evaluators._registry import EvaluatorName, registered_as
from judgelab.evaluators._spi import EvaluationRequest
from judgelab.evaluators._template_config import TemplateConfig
from judgelab.evaluators._yesno import YesNoEvaluator, YesNoParameters
from judgelab.specs import ModelSpec

__all__ = ["RelevancyEvaluator", "DEFAULT_RELEVANCY_TEMPLATE", "judge_relevancy_options"]

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


def judge_relevancy_options(spec: ModelSpec | None) -> YesNoParameters:
    """The judge's own relevancy prompt: its spec's ``[tasks.relevancy]`` template, system prompt and labels.

    Empty when the spec has none (or there is no spec): the evaluator then asks Spring AI's prompt.
    """
    task = (getattr(spec, "tasks", None) or {}).get("relevancy")
    if task is None:
        return {}
    options: YesNoParameters = {"prompt_template": task.template}
    if task.system is not None:
        options["system"] = task.system
    if "yes" in task.labels and "no" in task.labels:
        options["labels"] = (task.labels["yes"], task.labels["no"])
    return options


@registered_as(
    EvaluatorName("relevancy", task="relevancy", default_for_task=True, options=judge_relevancy_options,
                  description="Is the response in line with the query and the context? (Spring AI "
                              "RelevancyEvaluator; the judge's own prompt when its spec has one)"),
    EvaluatorName("relevancy-spring-ai", task="relevancy", options={"prompt_template": DEFAULT_RELEVANCY_TEMPLATE},
                  description="Relevancy with Spring AI's prompt word for word, whatever the judge's spec holds."),
)
class RelevancyEvaluator(YesNoEvaluator):
    """Is the response to the query in line with the context? Spring AI's ``RelevancyEvaluator``.

    Field roles: ``user_text`` is the **query**, ``data_list`` the **context**
    (documents joined by newlines), ``response_content`` the **response**.
    ``score`` is P(yes) over yes/no; long contexts are chunked and the best
    chunk counts, as in ``FactCheckingEvaluator``.

    A custom ``prompt_template`` must contain ``{query}``, ``{response}`` and
    ``{context}``; construction fails with a ``TemplateError`` naming the
    missing ones. Without one, the template is the model spec's
    ``[tasks.relevancy]`` prompt when it has one (``judge_relevancy_options``),
    else Spring AI's; ``config_for()``, which knows no model, is Spring AI's
    (``evaluator_config("relevancy", spec)`` is the one for a spec).
    """

    default_name = "relevancy"
    evidence_field = "context"
    required_placeholders = ("query", "response", "context")
    default_template = DEFAULT_RELEVANCY_TEMPLATE
    pass_word = "relevant"
    fail_word = "not relevant"

    def __init__(self, model: JudgeModel, config: TemplateConfig | None = None, /,
                 **parameters: Unpack[YesNoParameters]) -> None:
        if config is None and "prompt_template" not in parameters:
            parameters = {**judge_relevancy_options(model.spec), **parameters}
        self._start(model, config, parameters)

    def template_values(self, request: EvaluationRequest) -> dict[str, str]:
        return {
            "query": request.user_text,
            "response": request.response_content,
            "context": "\n".join(request.documents_text),
        }
