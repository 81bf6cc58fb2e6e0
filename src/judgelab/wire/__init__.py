"""The wire layer: what clients send, as typed questions and judge turns, and back; a policy bound to evaluators.

Written once, below the server, MCP and the pytest plugin and above the
evaluators (docs/architecture.md draws the path of one judgment):

- ``one_turn`` and ``content_text``: a conversation -> one judge turn (user
  text and system prompt);
- ``DecisionQuestion`` and its parts: OpenAI's Decisions questions, declared
  once (the server and MCP add only their transport fields);
  ``ask_decisions``: those questions -> ``judgelab.questions`` -> answers in
  the API's shape (``/v1/decisions``, MCP ``decide``);
- ``ask_systemone``: TypeSafe's System One questions, the same way;
- ``bind_policy`` / ``policy_applies``: a calibrated policy -> the
  evaluators that ask its question (template hash, read from each
  registered name and the model spec by ``registered_template_hashes``).

Every refusal is a ``WireError`` with the field at fault (``param``) and a
``code``; the server answers it with a 400, MCP with a tool error.
"""

from judgelab.wire._conversation import SYSTEM_ROLES, content_text, one_turn
from judgelab.wire._decision_models import (
    MAX_CHOICES,
    DecisionChoiceOption,
    DecisionChoiceQuestion,
    DecisionLevel,
    DecisionPart,
    DecisionPredicate,
    DecisionQuestion,
    DecisionScoreQuestion,
)
from judgelab.wire._decisions import (
    MAX_QUESTIONS,
    STATE_FIELD,
    ask_decisions,
    check_decision_questions,
    decision_answer,
    decision_question,
    decision_state,
)
from judgelab.wire._errors import WireError
from judgelab.wire._policy import (
    BoundPolicy,
    PolicyTaker,
    apply_policy,
    bind_policy,
    policy_applies,
    policy_summary,
    registered_template_hashes,
    template_hash_of,
)
from judgelab.wire._systemone import SystemOneNoulCriteria, SystemOneQuestion, ask_systemone, systemone_answer, systemone_question

__all__ = [
    "MAX_CHOICES", "MAX_QUESTIONS", "STATE_FIELD", "SYSTEM_ROLES", "BoundPolicy", "DecisionChoiceOption",
    "DecisionChoiceQuestion", "DecisionLevel", "DecisionPart", "DecisionPredicate", "DecisionQuestion",
    "DecisionScoreQuestion", "PolicyTaker",
    "SystemOneNoulCriteria", "SystemOneQuestion", "WireError", "apply_policy", "ask_decisions", "ask_systemone",
    "bind_policy", "check_decision_questions", "content_text", "decision_answer", "decision_question", "decision_state",
    "one_turn", "policy_applies", "policy_summary", "registered_template_hashes", "systemone_answer",
    "systemone_question", "template_hash_of",
]
