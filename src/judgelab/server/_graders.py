"""Grading requests of other harnesses on ``/v1/chat/completions``, answered in the format each one parses.

- **promptfoo ``llm-rubric``.** promptfoo's grader sends its rubric prompt
  (a user message ``<Output>...</Output>`` then ``<Rubric>...</Rubric>``) and
  parses a JSON object ``{"reason", "pass", "score"}`` from the reply. Such a
  request is detected from that user message and answered with the served
  ``fact-checking`` evaluator (the output is the document, the rubric the
  claim): ``score`` is P(pass), ``pass`` is P(pass) >= ``--grader-threshold``
  (default 0.5), and ``reason`` states both. promptfoo passes a row when
  ``pass`` is true and, with a ``threshold`` on the assertion, ``score >=
  threshold``: its threshold is a threshold on P(pass).
- **Inspect AI's model-graded scorers** ask for ``GRADE: $LETTER`` (LETTER one
  of ``CI`` or ``CPI``) and read the grade with a pattern; a reply that is
  one of the server's default labels (``Yes``/``No``) never matches, and every
  score is nan. A request whose labels cannot match is answered as asked, with
  a warning in the server log and in the response's ``judgelab.warnings``
  that names the labels to pass (``extra_body={"labels": ["GRADE: C",
  "GRADE: I"]}``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import SupportsFloat

from fastapi import Request

from judgelab.evaluators import Document, EvaluationRequest
from judgelab.server._evaluate import evaluate_requests
from judgelab.server._prompts import ChatTurn
from judgelab.server._state import JudgeState
from judgelab.wire import content_text

__all__ = ["RUBRIC_EVALUATOR", "inspect_label_warning", "promptfoo_rubric", "rubric_answer", "warn_once"]

log = logging.getLogger(__name__)

#: The served evaluator a promptfoo rubric is graded with (output = document, rubric = claim).
RUBRIC_EVALUATOR = "fact-checking"

_RUBRIC = re.compile(r"<Output>\s*(?P<output>.*?)\s*</Output>\s*<Rubric>\s*(?P<rubric>.*?)\s*</Rubric>", re.S)
_INSPECT = re.compile(r"GRADE: \$LETTER.*?LETTER is one of (?P<letters>[A-Z]+)", re.S)
_warned: set[tuple[str, ...]] = set()


def _texts(messages: Sequence[ChatTurn]) -> list[tuple[str, str]]:
    out = []
    for i, m in enumerate(messages):
        try:
            out.append((str(m.role), content_text(m.content, param=f"messages.{i}.content")))
        except Exception:  # a part the judge cannot read: not a grading request; the normal path reports it
            return []
    return out


def promptfoo_rubric(messages: Sequence[ChatTurn]) -> tuple[str, str] | None:
    """``(output, rubric)`` of a promptfoo ``llm-rubric`` grading request, else ``None``."""
    users = [text for role, text in _texts(messages) if role == "user"]
    match = _RUBRIC.search(users[-1]) if users else None
    return (match.group("output"), match.group("rubric")) if match else None


def inspect_label_warning(messages: Sequence[ChatTurn], labels: Sequence[str]) -> str | None:
    """A warning when the request is an Inspect AI grader whose ``GRADE:`` pattern none of ``labels`` can match."""
    text = "\n".join(t for _, t in _texts(messages))
    match = _INSPECT.search(text)
    if match is None:
        return None
    letters = match.group("letters")
    pattern = re.compile(rf"(?i)GRADE\s*:\s*[{letters}]\b")
    if all(pattern.search(label) for label in labels):
        return None
    wanted = [f"GRADE: {c}" for c in letters]
    return (f"This request is an Inspect AI grader (it asks for 'GRADE: $LETTER', LETTER one of {letters}), but the "
            f"labels {list(labels)} cannot match its grade pattern, so every score it reads is nan. Pass "
            f"labels={wanted} in the request (Inspect: extra_body={{'labels': {wanted}}}) or start the server with "
            + " ".join(f"--labels '{w}'" for w in wanted) + ".")


def warn_once(warning: str, labels: Sequence[str]) -> None:
    """Log an Inspect label warning, once per set of labels."""
    key = tuple(labels)
    if key not in _warned:
        _warned.add(key)
        log.warning("%s", warning)


async def rubric_answer(request: Request, output: str, rubric: str) -> tuple[str, dict[str, object]]:
    """The reply text promptfoo parses for one rubric, and the ``judgelab`` field.

    ``score`` is P(pass): the served ``fact-checking`` evaluator's probability
    that the rubric's statement holds of the output.
    """
    state: JudgeState = request.app.state.judge
    threshold = state.config.grader_threshold
    judged = EvaluationRequest(user_text="", data_list=[Document(output)], response_content=rubric)
    response = (await evaluate_requests(request, RUBRIC_EVALUATOR, threshold, [judged]))[0]
    score = response["score"]
    assert isinstance(score, SupportsFloat), score  # EvaluationResponse.to_dict's score
    p = float(score)
    verdict = p >= threshold
    reason = (f"P(pass) = {p:.4f}: the judge's probability that the rubric holds of the output "
              f"({RUBRIC_EVALUATOR} evaluator); {'at or above' if verdict else 'below'} the grader threshold "
              f"{threshold:g}. score is P(pass), so an assertion's threshold applies to it.")
    reply = json.dumps({"pass": verdict, "score": p, "reason": reason})
    return reply, {"grader": "promptfoo llm-rubric", "probability": p, "threshold": threshold,
                   "evaluator": RUBRIC_EVALUATOR}
