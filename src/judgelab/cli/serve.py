"""``judgelab serve``: load one judge model and serve it over HTTP.

Speaks judgelab's ``/v1/evaluate``, TypeSafe's ``/v1/systemone``, Ollama's
``/api/*`` and OpenAI's ``/v1/chat/completions`` and ``/v1/decisions``; see docs/server.md.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING

from judgelab.cli._server_options import add_limit_flags, add_model_flags, model_options, server_config

if TYPE_CHECKING:
    from judgelab.engine import JudgeModel
    from judgelab.server import ServerConfig

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve one judge model over the Ollama, OpenAI, TypeSafe and judgelab HTTP APIs",
        description="Load one judge model and serve it to many clients. Chat and generate "
        "requests are answered with exactly one label (greedy decoding restricted to the labels) "
        "and its probability. Binds to 127.0.0.1 by default.",
    )
    add_model_flags(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; 0.0.0.0 exposes it)")
    p.add_argument("--port", type=int, default=11434, help="port (default 11434, Ollama's)")
    p.add_argument("--labels", default=None,
                   help="comma-separated labels for chat/generate answers, e.g. Yes,No "
                   "(default: the spec's fact-check labels, else Yes,No)")
    p.add_argument("--alias", action="append", default=[], metavar="NAME",
                   help="another model name to answer to (repeatable), e.g. bespoke-minicheck or jev-latest")
    add_limit_flags(p)
    p.add_argument("--num-predict", type=int, default=2, help="Ollama num_predict when a request sets none (default 2)")
    p.add_argument("--graceful-timeout", type=float, default=None,
                   help="seconds to wait for in-flight requests on shutdown (default: until they finish)")
    p.add_argument("--cascade", metavar="CASCADE_JSON",
                   help="a fitted cascade (judgelab cascade fit) served as the 'cascade' evaluator on /v1/evaluate; "
                   "--model judges the stages whose spec it has, the other stages' models are loaded too; "
                   "refused when a stage's spec or template hash differs")
    p.set_defaults(func=run)


def _labels(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    labels = tuple(part.strip() for part in text.split(",") if part.strip())
    if len(labels) < 2:
        raise ValueError(f"--labels needs at least two comma-separated labels, got {text!r}")
    return labels


def _config(args: argparse.Namespace) -> ServerConfig:
    """The server config from the flags; ``ValueError`` naming the flag for a bad value."""
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, got {args.port}")
    return server_config(args, labels=_labels(args.labels), aliases=tuple(args.alias),
                         default_num_predict=args.num_predict)


def run(args: argparse.Namespace) -> int:
    from judgelab.engine import load_model
    from judgelab.server import create_app, serve

    try:  # every option is checked before the model loads
        config = _config(args)
    except ValueError as exc:
        print(f"judgelab serve: error: {exc}", file=sys.stderr)
        return 2
    options = model_options(args)
    cascade = None
    if getattr(args, "cascade", None):
        from judgelab.calibration import load_cascade

        cascade = load_cascade(args.cascade)  # a bad file is refused before any model loads
    model = load_model(args.model, backend=args.backend, **options)
    stage_models: list[JudgeModel | None] = []
    try:
        evaluators = None
        if cascade is not None:
            from judgelab.evaluators import build_cascade, load_stage_models

            stage_models = load_stage_models(model, cascade, backend=args.backend, **options)
            build_cascade(model, cascade, stage_models=stage_models)  # refuses a stage of another judge now
            evaluators = {"cascade": lambda m, t: build_cascade(m, cascade, stage_models=stage_models)}
        app = create_app(model, config, evaluators=evaluators)
        labels = app.state.judge.labels
        print(f"judgelab serve: {model.id} ({model.info().backend}, n_ctx {model.n_ctx}) on "
              f"http://{args.host}:{args.port}  labels {','.join(labels)}"
              f"{'  (API key required)' if config.api_key else ''}", flush=True)
        level = ["warning", "info", "debug"][min(getattr(args, "verbose", 0) + 1, 2)]
        serve(app, host=args.host, port=args.port, log_level=level, graceful_s=args.graceful_timeout)
    finally:
        for m in {id(m): m for m in stage_models if m is not None}.values():
            m.close()
        model.close()
    return 0
