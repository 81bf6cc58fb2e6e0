"""The ``judgelab`` command line: thin wrappers over library functions.

Each sub-command lives in its own module that exposes ``register(subparsers)``;
``register`` adds a parser whose ``func`` default takes the parsed arguments
and returns an exit code.

Exit codes: 0 success; 1 a check failed (``gate``, ``check``); 2 a user error
(bad input, options or files: one line on stderr); 3 a partial run (rows of a
``calibrate``, ``stress``, ``gate``, ``cascade``, ``tune`` or ``bench`` run failed, so no
figures were published: one line says how many, the first error, and that the
same command resumes; ``--allow-partial`` publishes them "on N of M rows");
130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from judgelab.errors import PARTIAL_RUN_EXIT, JudgelabError, PartialRunError

# Sub-command modules, in the order ``judgelab --help`` lists them.
COMMAND_MODULES = (
    "judgelab.cli.check",
    "judgelab.cli.models",
    "judgelab.cli.calibrate",
    "judgelab.cli.tune",
    "judgelab.cli.stress",
    "judgelab.cli.sets",
    "judgelab.cli.compare",
    "judgelab.cli.bench",
    "judgelab.cli.view",
    "judgelab.cli.serve",
    "judgelab.cli.mcp",
    "judgelab.cli.policy",
    "judgelab.cli.gate",
    "judgelab.cli.estimate",
    "judgelab.cli.cascade",
    "judgelab.cli.jury",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgelab",
        description="Small LLM judges with probabilities, evaluators, servers and calibration.",
        epilog="Exit codes: 0 success; 1 a check failed (gate, check); 2 a user error; 3 a partial run "
        "(rows failed: no figures published unless --allow-partial; the same command resumes); 130 interrupted.",
    )
    from judgelab import __version__

    parser.add_argument("--version", action="version", version=f"judgelab {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PartialRunError as exc:
        print(f"judgelab {args.command}: partial run: {exc}", file=sys.stderr)
        return PARTIAL_RUN_EXIT
    except JudgelabError as exc:
        print(f"judgelab {args.command}: error: {exc}", file=sys.stderr)
        return 2  # a user error: bad input, options or files
    except KeyboardInterrupt:
        print(f"judgelab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
