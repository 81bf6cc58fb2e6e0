"""Option types shared by the sub-commands: bad values are rejected by argparse (exit 2) before any work."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def probability(text: str) -> float:
    """A number in [0, 1] (a threshold on a probability)."""
    value = _number(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1] (a probability), got {text!r}")
    return value


def open_unit(text: str) -> float:
    """A number strictly between 0 and 1 (an error rate)."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1 (exclusive), got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def threshold_strategy(text: str) -> str:
    """A threshold strategy ``parse_strategy`` accepts (checked before any scoring)."""
    from judgelab.calibration import parse_strategy
    from judgelab.errors import JudgelabError

    try:
        parse_strategy(text)
    except (JudgelabError, ValueError) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def print_help_of(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A command function that prints ``parser``'s help and returns 2 (a command group run without a command)."""

    def run(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    return run
