"""The MCP tools over ``McpJudge``, with the official SDK's ``MCPServer``.

Each tool's signature is its JSON schema (pydantic ``Field`` descriptions) and
its docstring is what an agent reads to decide when and how to call it. A bad
argument, or a request the judge cannot answer, is a tool error
(``isError``) with one line; the server keeps serving.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import Field, ValidationError

from judgelab import __version__
from judgelab.errors import JudgelabError
from judgelab.mcp._decide import Message, Question
from judgelab.mcp._judge import McpJudge
from judgelab.mcp._results import CheckResult, FullEvaluationResult
from judgelab.server import APIError, BatcherClosedError

__all__ = ["TOOL_NAMES", "create_mcp_server"]

_T = TypeVar("_T")

log = logging.getLogger(__name__)

TOOL_NAMES = ("fact_check", "check_relevancy", "decide", "evaluate", "list_models")

INSTRUCTIONS = (
    "judgelab: a small LLM judge that answers closed questions with probabilities read from one forward "
    "pass. Use fact_check to verify a claim against source text, check_relevancy to check an answer "
    "against a query and its retrieved context, decide for your own yes/no, multiple-choice or 1..n "
    "questions about a text or conversation, evaluate for any other judgelab evaluator (list_models "
    "names them). Scores are probabilities in [0, 1]; 'decision' is pass, fail or abstain (abstain: the "
    "calibrated policy cannot decide; ask a person or a stronger judge)."
)

Threshold = Annotated[float | None, Field(None, ge=0.0, le=1.0,
                      description="Pass when the score reaches it (default 0.5). Ignored under a calibrated policy.")]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _validation_line(tool: str, exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0] if errors else {"loc": (), "msg": str(exc)}
    where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return _one_line(f"Bad arguments for {tool}: {where}: {first.get('msg')}{more}. See the tool's input schema.")


class _JudgeServer(MCPServer[object]):
    """``MCPServer`` whose argument-validation errors are one line."""

    async def call_tool(self, name: str, arguments: dict[str, object], context: Context[object, object] | None = None,
                        ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_validation_line(name, exc.__cause__)) from exc.__cause__
            raise


def _run(tool: str, work: Callable[..., _T], *args: object) -> _T:
    """Run one tool's work; the caller's mistakes become a one-line ``ToolError``.

    The SDK prefixes the message with "Error executing tool TOOL: ".
    """
    try:
        return work(*args)
    except BatcherClosedError as exc:
        raise ToolError("the judge is shutting down; retry on a new server.") from exc
    except APIError as exc:
        raise ToolError(_one_line(exc.message)) from exc
    except (JudgelabError, ValueError) as exc:
        raise ToolError(_one_line(str(exc))) from exc


def _register(server: MCPServer[object], judge: McpJudge) -> None:
    def fact_check(
        document: Annotated[str, Field(min_length=1, description="The source text: the only evidence the claim is checked against.")],
        claim: Annotated[str, Field(min_length=1, description="One factual statement to verify (check long answers claim by claim).")],
        threshold: Threshold = None,
    ) -> CheckResult:
        """Check whether a claim is supported by a document (grounding / hallucination check).

        Returns `probability` = P(supported), `verdict` (supported, not supported, or abstain), `decision`
        (pass, fail, abstain), the `threshold` or the calibrated `policy` that decided, per-chunk
        `chunks` scores (long documents are split; the best chunk counts), `feedback`, `model` and
        `spec_hash`. Act on `decision`: on fail, revise or drop the claim; on abstain, get a second opinion.
        """
        return CheckResult(**_run("fact_check", judge.fact_check, document, claim, threshold))

    def check_relevancy(
        query: Annotated[str, Field(min_length=1, description="The user's question.")],
        context: Annotated[list[str], Field(description="The retrieved passages the answer should draw on (may be empty).")],
        answer: Annotated[str, Field(min_length=1, description="The answer to check.")],
        threshold: Threshold = None,
    ) -> CheckResult:
        """Check whether an answer is in line with the query and the retrieved context (RAG answer relevancy).

        Returns `probability` = P(relevant), `verdict` (relevant, not relevant, or abstain), `decision`,
        the `threshold` or `policy`, `chunks`, `feedback`, `model` and `spec_hash`.
        """
        return CheckResult(**_run("check_relevancy", judge.check_relevancy, query, context, answer, threshold))

    def decide(
        input: Annotated[str | list[Message], Field(description="The text to judge, or a conversation as "
                                                    "[{role, content}] (system/developer turns instruct the judge).")],
        questions: Annotated[list[Question], Field(min_length=1, max_length=400, description=(
            "1 to 400 questions about the input, each {type, instructions, name?}: type 'predicate' (yes/no), "
            "'choice' with choices [{value, description?}] (2 to 26), or 'score' with levels "
            "[{label, description?}] lowest first (2 to 10)."))],
    ) -> dict[str, object]:
        """Answer your own closed questions about a text or a conversation, all from one shared prefill.

        Answers come in question order: a predicate's `probability` is P(yes); a choice has `choice`,
        `confidence` and `probabilities` per option; a score has `score` (the expected level index,
        0 = first level) and `probabilities` per level. A question whose labels the judge cannot read
        gets `{"type": "refusal", "reason": ...}`; the others are still answered.
        """
        return _run("decide", judge.decide, input, questions)

    def evaluate(
        evaluator: Annotated[str, Field(min_length=1, description="A registered evaluator name from list_models "
                                        "(e.g. fact-checking, bespoke-minicheck, relevancy), optionally NAME+fenced.")],
        user_text: Annotated[str, Field(description="Spring AI's userText: the query (relevancy) or the document (fact-checking).")],
        documents: Annotated[list[str], Field(default_factory=list, description="Supporting documents (Spring AI's dataList).")],
        response: Annotated[str, Field("", description="The response or claim being judged.")] = "",
        threshold: Threshold = None,
    ) -> FullEvaluationResult:
        """Run any registered judgelab evaluator on a Spring AI style EvaluationRequest.

        Returns `passed`, `score`, `decision` (pass, fail, abstain), `threshold` or `policy`, `feedback`,
        `chunks`, `model`, `spec_hash` and the evaluator's full `metadata`. Unknown names are an error
        that lists the known ones.
        """
        return FullEvaluationResult(**_run("evaluate", judge.evaluate, evaluator, user_text, documents, response,
                                           threshold))

    def list_models() -> dict[str, object]:
        """Show which judge model this server runs (`served`), the model specs this install knows (with
        whether their weights are present), the calibrated policy if any, and the evaluator names that
        `evaluate` accepts. One server serves one model; start another for another model."""
        return _run("list_models", judge.list_models)

    for tool in (fact_check, check_relevancy, decide, evaluate, list_models):
        server.add_tool(tool, structured_output=True)


def create_mcp_server(judge: McpJudge) -> MCPServer[object]:
    """The MCP server with the five judgelab tools over ``judge``."""
    server = _JudgeServer(
        "judgelab",
        title=f"judgelab judge {judge.model.id}",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    _register(server, judge)
    return server
