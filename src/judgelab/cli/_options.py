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


def add_allow_partial(p: argparse.ArgumentParser) -> None:
    """``--allow-partial``: publish figures from a run in which rows failed (else exit 3, nothing published)."""
    p.add_argument("--allow-partial", action="store_true",
                   help="publish figures even when rows failed to score (the headline then says 'on N of M "
                   "rows'); without it such a run exits 3, writes no headline, threshold, calibrator or policy, "
                   "and the same command resumes")


def add_scoring_run_options(p: argparse.ArgumentParser, *, out: str, seed_help: str) -> None:
    """The options of a command that scores a set with a local model and analyses it (calibrate, stress)."""
    p.add_argument("--batch-size", type=positive_int, default=8, help="rows per evaluate_many call (default 8)")
    p.add_argument("--resamples", type=positive_int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help=f"{seed_help} (default 0)")
    p.add_argument("--threads", type=positive_int, help="CPU threads for the model")
    p.add_argument("--backend", default="llama_cpp", help="llama_cpp (default) or transformers")
    p.add_argument("--no-plots", action="store_true", help="skip the matplotlib figures")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--out", default=out, help=f"output folder (default {out}); reruns resume")


def print_interval_warning(units: object, intervals: object = None, *, what: str = "intervals") -> None:
    """Print the analysis's warning (``interval_warning``) when intervals over ``units`` cannot vary."""
    from judgelab.calibration import interval_warning

    warning = interval_warning(units, intervals, what=what)  # type: ignore[arg-type]
    if warning:
        print(f"  warning: {warning}")
