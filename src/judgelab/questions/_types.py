"""Typed questions (``Noul``, ``Choice``, ``Score``) and their answers.

A question is a plain value: it says what to ask and which closed set of
answers the model picks from. Asking it over a state (see ``ask``) gives the
matching answer type, read from one prefill.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from judgelab.errors import QuestionError

__all__ = [
    "MAX_CHOICE_OPTIONS",
    "Choice",
    "ChoiceAnswer",
    "Noul",
    "NoulAnswer",
    "Question",
    "Answer",
    "Score",
    "ScoreAnswer",
    "MAX_LEVELS",
]

#: Options a ``Choice`` may have: one letter each, A to Z.
MAX_CHOICE_OPTIONS = 26

MAX_LEVELS = 10
"""A ``Score`` has at most this many levels (0..9, one digit token each)."""


def _text(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise QuestionError(f"{what} must be a string, got {type(value).__name__}.")
    return value.strip() or None


@dataclass(frozen=True)
class Noul:
    """A yes/no question; its answer is P(yes).

    Parameters
    ----------
    instructions
        The question, referring to state fields by name in backticks
        ("Is every claim in `assistant_answer` supported by `supporting_context`?").
    when_true, when_false
        What a "yes" and a "no" mean. ``when_false`` also names the defect
        when the question fails ("Contains an impossible value").

    At least one of the three is required.
    """

    instructions: str | None = None
    when_true: str | None = None
    when_false: str | None = None

    def __post_init__(self) -> None:
        for name in ("instructions", "when_true", "when_false"):
            object.__setattr__(self, name, _text(getattr(self, name), f"Noul.{name}"))
        if not (self.instructions or self.when_true or self.when_false):
            raise QuestionError(
                "A Noul needs instructions or criteria: give instructions=, when_true= "
                "or when_false= (e.g. Noul(when_false='Contains an impossible value'))."
            )


@dataclass(frozen=True)
class Choice:
    """A question with named options; its answer is a probability per option.

    Parameters
    ----------
    instructions
        The question.
    options
        ``{label: description}`` in the order they are shown (2 or more).
    letters
        Read the answer from option letters ``A``, ``B``, ... (``True``), from
        the labels themselves (``False``), or decide per model (``None``):
        labels when each is a single token for that model, letters otherwise.
    """

    instructions: str
    options: Mapping[str, str]
    letters: bool | None = None

    def __post_init__(self) -> None:
        instructions = _text(self.instructions, "Choice.instructions")
        if not instructions:
            raise QuestionError("A Choice needs instructions (the question to ask).")
        if not isinstance(self.options, Mapping):
            raise QuestionError(
                "Choice options must be a mapping {label: description}, "
                f"got {type(self.options).__name__}."
            )
        options: dict[str, str] = {}
        for label, description in self.options.items():
            if not isinstance(label, str) or not label.strip():
                raise QuestionError(f"Choice option labels must be non-blank strings, got {label!r}.")
            options[label.strip()] = "" if description is None else str(description).strip()
        if len(options) < 2:
            raise QuestionError(f"A Choice needs at least 2 options, got {list(options)}.")
        if len(options) > MAX_CHOICE_OPTIONS:
            raise QuestionError(
                f"A Choice has at most {MAX_CHOICE_OPTIONS} options (letters A-Z), got {len(options)}.")
        if len({k.lower() for k in options}) != len(options):
            raise QuestionError(
                f"Choice option labels {list(options)} are not distinct once case is ignored."
            )
        object.__setattr__(self, "instructions", instructions)
        object.__setattr__(self, "options", MappingProxyType(options))

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.options)


@dataclass(frozen=True)
class Score:
    """An ordered scale; its answer is a probability per level and the expected level.

    Parameters
    ----------
    instructions
        The question.
    levels
        Descriptions of levels ``0 .. n-1``, worst first (2 to 10 levels).
    """

    instructions: str
    levels: Sequence[str]

    def __post_init__(self) -> None:
        instructions = _text(self.instructions, "Score.instructions")
        if not instructions:
            raise QuestionError("A Score needs instructions (the question to ask).")
        if isinstance(self.levels, str) or not isinstance(self.levels, Sequence):
            raise QuestionError("Score levels must be a list of descriptions, level 0 first.")
        levels = tuple(str(d).strip() for d in self.levels)
        if not 2 <= len(levels) <= MAX_LEVELS:
            raise QuestionError(
                f"A Score needs 2 to {MAX_LEVELS} levels, got {len(levels)}."
            )
        if any(not d for d in levels):
            raise QuestionError("Score level descriptions must not be blank.")
        object.__setattr__(self, "instructions", instructions)
        object.__setattr__(self, "levels", levels)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(str(i) for i in range(len(self.levels)))


Question = Noul | Choice | Score


@dataclass(frozen=True)
class NoulAnswer:
    """P(yes) of a ``Noul``."""

    probability: float
    prompt_tokens: int = 0

    @property
    def answer(self) -> bool:
        """The more likely answer (yes on a tie)."""
        return self.probability >= 0.5

    @property
    def confidence(self) -> float:
        """``max(p, 1 - p)``."""
        return max(self.probability, 1.0 - self.probability)


@dataclass(frozen=True)
class ChoiceAnswer:
    """The distribution over a ``Choice``'s options."""

    probabilities: Mapping[str, float]
    choice: str
    confidence: float
    prompt_tokens: int = 0
    read_as: tuple[str, ...] = field(default=(), compare=False)
    """The tokens' words that were read (the letters, or the labels)."""


@dataclass(frozen=True)
class ScoreAnswer:
    """The distribution over a ``Score``'s levels."""

    probabilities: tuple[float, ...]
    expected: float
    level: int
    prompt_tokens: int = 0

    def share_at_least(self, level: int) -> float:
        """P(level >= ``level``)."""
        return float(sum(self.probabilities[max(level, 0):]))


Answer = NoulAnswer | ChoiceAnswer | ScoreAnswer
