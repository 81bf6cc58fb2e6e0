"""``McpJudge``: the one loaded model behind the MCP tools, and what each tool does with it.

Every tool call judges through the same queue as ``judgelab serve``
(``judgelab.server.Batcher`` and ``QueuedModel``): one worker thread owns the
model, concurrent calls are batched and take turns, and each call is one
``RequestTicket`` with ``ServerConfig.max_request_prompts``. The methods here
take plain values and return JSON-ready dicts; they raise ``JudgelabError``
(or the server's ``APIError``) for what the caller got wrong, which the MCP
layer turns into a one-line tool error. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Sequence

from judgelab.engine import BackendJudgeModel
from judgelab.errors import JudgelabError
from judgelab.evaluators import Document, EvaluationRequest, Evaluator, build_evaluator, evaluator_names, registered_evaluator
from judgelab.mcp._decide import Message, answer_questions
from judgelab.server import Batcher, QueuedModel, RequestTicket, ServerConfig
from judgelab.wire import BoundPolicy, DecisionQuestion, apply_policy, bind_policy, policy_summary, registered_template_hashes

__all__ = ["McpJudge"]


class McpJudge:
    """The served model, its queue and its config.

    Parameters
    ----------
    model
        The loaded model (the caller keeps ownership).
    config
        The same ``ServerConfig`` as ``judgelab serve``: API key, limits,
        queue settings, and ``policy`` (a calibrated pass/fail/abstain policy
        that decides for the evaluators it was calibrated for).
    """

    def __init__(self, model: BackendJudgeModel, config: ServerConfig | None = None) -> None:
        self.model = model
        self.config = config or ServerConfig()
        self.policy_evaluators = self._bind_policy(self.config.policy)  # before the worker starts
        self.batcher = Batcher(model, window=self.config.batch_window_ms / 1000.0,
                               max_prompts=self.config.max_batch_prompts, turn_tokens=self.config.turn_tokens)
        self.queued = QueuedModel(model, self.batcher)

    def _bind_policy(self, policy: BoundPolicy | None) -> list[str]:
        """The registered evaluators ``policy`` decides for; refused at start-up when it is not this judge's.

        The policy (``--policy``) is the one place that changes how a tool
        decides: ``_evaluator`` gives it to every evaluator that asks the
        question it was calibrated for (same template hash, read from each
        name and the model spec without building it; ``judgelab.wire.bind_policy``).
        """
        if policy is None:
            return []
        names = [v for n in evaluator_names() for v in (n, f"{n}+fenced")]
        return bind_policy(policy, self.model, registered_template_hashes(names, self.model))

    def _view(self) -> QueuedModel:
        """The model as one call sees it: through the queue, with its own prompt budget."""
        return self.queued.for_request(RequestTicket(self.config.max_request_prompts))

    def _evaluator(self, name: str, threshold: float | None) -> Evaluator:
        base = name.partition("+")[0]
        if ":" in base:  # an agent must not make the server import modules
            raise JudgelabError(f"evaluator {name!r}: 'module:callable' evaluators are not served over MCP; "
                                f"use one of {', '.join(evaluator_names())}.")
        registered_evaluator(base)
        view = self._view()
        evaluator = build_evaluator(name, view) if threshold is None else build_evaluator(name, view, threshold=threshold)
        if name in self.policy_evaluators and self.config.policy is not None:
            apply_policy(evaluator, self.config.policy)
        return evaluator

    def _judged(self, name: str, request: EvaluationRequest, threshold: float | None) -> dict[str, object]:
        response = self._evaluator(name, threshold).evaluate(request)
        meta = dict(response.metadata)
        decision = meta.get("decision") or ("pass" if response.passed else "fail")
        return {
            "passed": response.passed,
            "score": response.score,
            "decision": decision,
            "threshold": None if meta.get("decision") else meta.get("threshold"),
            "policy": meta.get("policy"),
            "feedback": response.feedback,
            "chunks": meta.get("chunks"),
            "model": meta.get("model", self.model.id),
            "spec_hash": meta.get("spec_hash"),
            "evaluator": name,
            "metadata": meta,
        }

    # -- the tools ---------------------------------------------------------------

    def fact_check(self, document: str, claim: str, threshold: float | None = None) -> dict[str, object]:
        """P(the claim is supported by the document), its verdict, the threshold or policy decision, chunk scores."""
        out = self._judged("fact-checking", EvaluationRequest(user_text=document, response_content=claim), threshold)
        verdict = {"pass": "supported", "fail": "not supported", "abstain": "abstain"}[str(out["decision"])]
        return {"probability": out["score"], "verdict": verdict, **{k: v for k, v in out.items() if k != "metadata"}}

    def check_relevancy(self, query: str, context: Sequence[str], answer: str,
                        threshold: float | None = None) -> dict[str, object]:
        """P(the answer is in line with the query and the context), as ``fact_check``."""
        request = EvaluationRequest(user_text=query, data_list=[Document(text) for text in context], response_content=answer)
        out = self._judged("relevancy", request, threshold)
        verdict = {"pass": "relevant", "fail": "not relevant", "abstain": "abstain"}[str(out["decision"])]
        return {"probability": out["score"], "verdict": verdict, **{k: v for k, v in out.items() if k != "metadata"}}

    def evaluate(self, evaluator: str, user_text: str, documents: Sequence[str], response: str,
                 threshold: float | None = None) -> dict[str, object]:
        """Any registered evaluator on a Spring AI ``EvaluationRequest``."""
        request = EvaluationRequest(user_text=user_text, data_list=[Document(text) for text in documents], response_content=response)
        return self._judged(evaluator, request, threshold)

    def decide(self, input: str | Sequence[Message], questions: Sequence[DecisionQuestion]) -> dict[str, object]:
        """The Decisions API's questions about one input, answered together."""
        return answer_questions(self._view(), input, questions)

    def list_models(self) -> dict[str, object]:
        """The served model, the model specs this install knows, and the evaluator names."""
        from judgelab.specs import DEFAULT_MODEL_ID, scan_specs
        from judgelab.weights import weights_status

        models = []
        for spec in scan_specs().specs:
            try:
                present = weights_status(spec).present
            except JudgelabError:
                present = False
            models.append({"id": spec.id, "family": spec.family, "description": spec.description,
                           "served": spec.id == self.model.id, "default": spec.id == DEFAULT_MODEL_ID,
                           "weights_present": present})
        evaluators = [{"name": n, "task": registered_evaluator(n).task,
                       "description": registered_evaluator(n).description} for n in evaluator_names()]
        policy = self.config.policy
        return {"served": self.model.id, "spec_hash": self.model.spec.spec_hash, "n_ctx": self.model.n_ctx,
                "policy": None if policy is None else policy_summary(policy, self.policy_evaluators),
                "models": models, "evaluators": evaluators}

    def close(self) -> None:
        """Finish queued judgments and stop the worker (the model stays open)."""
        self.batcher.close()
