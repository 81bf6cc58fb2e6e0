"""The flags ``judgelab serve`` and ``judgelab mcp`` share: model loading, API key, queue and limits.

Both commands build one ``ServerConfig`` from them, so a limit means the same
on both; each command adds its own flags (ports, labels, transports).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from judgelab.specs import DEFAULT_MODEL_ID

if TYPE_CHECKING:
    from judgelab.server import ServerConfig

__all__ = ["add_model_flags", "add_limit_flags", "model_options", "server_config"]


def add_model_flags(p: argparse.ArgumentParser) -> None:
    """``--model``, ``--backend``, ``--n-ctx``, ``--threads``, ``--n-gpu-layers``, ``--policy``."""
    p.add_argument("--model", default=DEFAULT_MODEL_ID, help=f"model id, spec .toml or .gguf path (default {DEFAULT_MODEL_ID})")
    p.add_argument("--backend", default="llama_cpp", help="llama_cpp (default) or transformers")
    p.add_argument("--n-ctx", type=int, default=None, help="context length (default: the spec's)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the model")
    p.add_argument("--n-gpu-layers", type=int, default=None, help="layers offloaded to the GPU (llama_cpp)")
    p.add_argument("--policy", metavar="POLICY_JSON",
                   help="a calibrated pass/fail/abstain policy (judgelab policy RUN) for the evaluators it was "
                   "calibrated for; refused when it was calibrated for another model spec or template")


def add_limit_flags(p: argparse.ArgumentParser) -> None:
    """The API key, queue and request/connection limits (``ServerConfig`` fields)."""
    p.add_argument("--api-key", default=None,
                   help="require 'Authorization: Bearer KEY' on every endpoint but /healthz "
                   "(default: $JUDGELAB_API_KEY; unset: no key)")
    p.add_argument("--batch-window-ms", type=float, default=5.0, help="micro-batching window (default 5 ms)")
    p.add_argument("--max-batch", type=int, default=64, help="most prompts per batch (default 64)")
    p.add_argument("--max-body-bytes", type=int, default=8 * 1024 * 1024, help="largest request body (default 8 MiB)")
    p.add_argument("--max-request-prompts", type=int, default=256,
                   help="most prompts (document chunks x claims x questions) one request may ask for; "
                   "more gets 413 (default 256)")
    p.add_argument("--turn-tokens", type=int, default=128,
                   help="most prompt tokens one request gets per engine call while others wait, so long "
                   "requests take turns with short ones (default 128)")
    p.add_argument("--header-timeout", type=float, default=10.0,
                   help="seconds a client has to send its request headers (default 10)")
    p.add_argument("--keep-alive-timeout", type=float, default=5.0,
                   help="seconds an idle kept-alive connection stays open (default 5)")
    p.add_argument("--max-connections", type=int, default=512,
                   help="connections and requests at once; more get 503 (default 512)")
    p.add_argument("--grader-threshold", type=float, default=0.5,
                   help="P(pass) at or above which a promptfoo llm-rubric grading request passes (default 0.5); "
                   "its score is P(pass), which promptfoo's threshold reads (docs/harnesses.md)")
    p.add_argument("--max-header-bytes", type=int, default=64 * 1024,
                   help="largest request head in bytes (default 64 KiB)")


def model_options(args: argparse.Namespace) -> dict[str, object]:
    """``load_model`` keyword options from the model flags that were given."""
    return {k: v for k, v in (("n_ctx", args.n_ctx), ("n_threads", args.threads),
                              ("n_gpu_layers", args.n_gpu_layers)) if v is not None}


def server_config(args: argparse.Namespace, **extra: object) -> ServerConfig:
    """The ``ServerConfig`` of the shared flags (and ``extra`` fields); ``ValueError`` naming a bad flag."""
    from judgelab.server import ServerConfig

    policy = None
    if args.policy:
        from judgelab.calibration import load_policy

        policy = load_policy(args.policy)
    return ServerConfig.from_env(
        policy=policy,
        api_key=args.api_key,
        batch_window_ms=args.batch_window_ms,
        max_batch_prompts=args.max_batch,
        max_body_bytes=args.max_body_bytes,
        max_request_prompts=args.max_request_prompts,
        turn_tokens=args.turn_tokens,
        header_timeout_s=args.header_timeout,
        keep_alive_timeout_s=args.keep_alive_timeout,
        max_connections=args.max_connections,
        max_header_bytes=args.max_header_bytes,
        grader_threshold=getattr(args, "grader_threshold", 0.5),
        **extra,
    )
