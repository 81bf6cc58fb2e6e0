"""``judgelab mcp``: serve one judge model as Model Context Protocol tools (docs/mcp.md).

stdio by default (what an MCP host launches: ``command: judgelab, args: [mcp]``),
or streamable HTTP with ``--http HOST:PORT`` and the same API key and limits as
``judgelab serve``. Nothing but the protocol is written to stdout.
"""

from __future__ import annotations

import argparse
import sys

from judgelab.cli._server_options import add_limit_flags, add_model_flags, model_options, server_config


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "mcp",
        help="serve one judge model as MCP tools (fact_check, check_relevancy, decide, evaluate, list_models)",
        description="Load one judge model and serve it to MCP hosts and agents: over stdio (the default; "
        "the host launches this command) or streamable HTTP at http://HOST:PORT/mcp (--http). Needs the "
        "mcp extra: pip install 'judgelab[mcp]'.",
    )
    add_model_flags(p)
    p.add_argument("--http", metavar="HOST:PORT", default=None,
                   help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio, e.g. 127.0.0.1:8765")
    add_limit_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgelab import mcp as judge_mcp
    from judgelab.engine import load_model

    try:  # every option is checked, and the SDK found, before the model loads
        address = judge_mcp.parse_host_port(args.http) if args.http else None
        config = server_config(args)
    except ValueError as exc:
        print(f"judgelab mcp: error: {exc}", file=sys.stderr)
        return 2
    judge_mcp.tool_names()  # BackendUnavailableError with the install hint when the extra is missing
    model = load_model(args.model, backend=args.backend, **model_options(args))
    try:
        judge = judge_mcp.McpJudge(model, config)
        where = f"http://{address[0]}:{address[1]}{judge_mcp.MCP_PATH}" if address else "stdio"
        print(f"judgelab mcp: {model.id} ({model.info().backend}, n_ctx {model.n_ctx}) on {where}"
              f"{'  (API key required)' if address and config.api_key else ''}"
              f"{'  policy ' + args.policy if args.policy else ''}", file=sys.stderr, flush=True)
        if address:
            level = ["warning", "info", "debug"][min(getattr(args, "verbose", 0), 2)]
            judge_mcp.run_http(judge, *address, log_level=level)
        else:
            judge_mcp.run_stdio(judge)
    finally:
        model.close()
    return 0
