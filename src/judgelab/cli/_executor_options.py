"""Command-line options that choose where a command scores its rows (``--ray`` and friends).

Any scoring command (``calibrate``, ``stress``) adds them with
``add_executor_arguments(parser)`` and turns the parsed arguments into the
``executor=`` of ``judgelab.calibration.run`` with ``executor_from_args(args)``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    from judgelab.calibration import RayExecutor

__all__ = ["add_executor_arguments", "executor_from_args", "print_executor_report"]


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--ray [auto|local|ADDRESS]``, ``--replicas``, ``--replica-threads``, ``--gpus-per-replica``, ``--block-size``."""
    group = parser.add_argument_group(
        "scale-out on Ray (pip install 'judgelab[ray]')",
        "Score on Ray replicas instead of this process; the records come back here, to the same "
        "scores.jsonl, and a rerun resumes whether rows were scored locally or on Ray (docs/scaleout.md).",
    )
    group.add_argument("--ray", nargs="?", const="auto", metavar="auto|local|ADDRESS",
                       help="score on a Ray cluster: 'auto' (the default when the flag has no value: RAY_ADDRESS "
                       "or a cluster started with 'ray start' here), 'local' (start one in this process) or HOST:PORT")
    group.add_argument("--replicas", type=int, default=2, help="Ray replicas, each loading the model once (default 2)")
    group.add_argument("--replica-threads", type=int, default=1, help="CPU threads per replica (default 1)")
    group.add_argument("--gpus-per-replica", type=float, default=0.0,
                       help="GPUs per replica; > 0 offloads the model to the GPU (default 0)")
    group.add_argument("--ray-runtime-env", metavar="JSON|FILE",
                       help="Ray runtime_env for the replicas, e.g. '{\"pip\": [\"judgelab[ray]\"]}' or a JSON file")
    group.add_argument("--block-size", type=int, default=32,
                       help="rows per block sent to a replica; rows of one document stay together (default 32)")


def executor_from_args(args: argparse.Namespace) -> RayExecutor | None:
    """The executor the options ask for: a ``RayExecutor``, or ``None`` (this process)."""
    if getattr(args, "ray", None) is None:
        for flag, default in (("replicas", 2), ("replica_threads", 1), ("gpus_per_replica", 0.0), ("block_size", 32), ("ray_runtime_env", None)):
            if getattr(args, flag, default) != default:
                raise JudgelabError(f"--{flag.replace('_', '-')} needs --ray (scoring in this process has no replicas).")
        return None
    from judgelab.calibration import RayExecutor

    return RayExecutor(
        address=args.ray,
        runtime_env=_runtime_env(getattr(args, "ray_runtime_env", None)),
        replicas=args.replicas,
        replica_threads=args.replica_threads,
        gpus_per_replica=args.gpus_per_replica,
        block_size=args.block_size,
    )


def _runtime_env(value: str | None) -> dict[str, object] | None:
    if not value:
        return None
    text = Path(value).read_text(encoding="utf-8") if not value.lstrip().startswith("{") else value
    try:
        env = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JudgelabError(f"--ray-runtime-env is not a JSON object ({exc.msg} at column {exc.colno}): {value!r}.") from exc
    if not isinstance(env, dict):
        raise JudgelabError(f"--ray-runtime-env must be a JSON object, got {type(env).__name__}.")
    return env


def print_executor_report(executor: object | None) -> None:
    """Print what the replicas did (rows, blocks, tokens decoded), when the run used any."""
    report = getattr(executor, "report", None)
    if report is not None:
        print(report.summary())
