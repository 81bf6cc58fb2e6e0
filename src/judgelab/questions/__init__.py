"""Typed questions over a state, answered from one prefill each.

A *state* is an ordered JSON-like mapping (``{"user_question": ...,
"assistant_answer": ..., "supporting_context": [...]}``); questions refer to
its fields by name in backticks. Three question types:

- ``Noul``: yes/no; the answer is P(yes).
- ``Choice``: named options; the answer is a probability per option, the
  most likely option and its probability (the confidence).
- ``Score``: ordered levels 0..n-1 (2 to 10); the answer is a probability per
  level and the expected level ``sum(i * p_i)``.

``ask(model, state, question)`` answers one; ``ask_all`` answers many, sharing
the engine's work between questions over the same state.
"""

from judgelab.questions._ask import PreparedQuestion, PromptAnswer, QuestionModel, ask, ask_all, ask_prompts, expected_level, prepare
from judgelab.questions._render import check_state, render_question, render_state
from judgelab.questions._types import MAX_CHOICE_OPTIONS, MAX_LEVELS, Answer, Choice, ChoiceAnswer, Noul, NoulAnswer, Question, Score, ScoreAnswer

__all__ = [
    "MAX_CHOICE_OPTIONS",
    "Answer",
    "Choice",
    "ChoiceAnswer",
    "MAX_LEVELS",
    "Noul",
    "NoulAnswer",
    "PreparedQuestion",
    "PromptAnswer",
    "Question",
    "QuestionModel",
    "Score",
    "ScoreAnswer",
    "ask",
    "ask_all",
    "ask_prompts",
    "check_state",
    "expected_level",
    "prepare",
    "render_question",
    "render_state",
]
