"""``judgelab view RUN [RUN_B]``: look at a run's rows in the browser; two runs side by side; a bench's disagreements."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "view",
        help="look at a run's rows in the browser: worst disagreements first, two runs side by side, label corrections",
        description="Serve a local web app over one calibrate run (or two: A and B) on 127.0.0.1: the run's report, "
        "a rows table sorted by disagreement (confident and wrong first) with filters and search, a page per row "
        "(document, claim, prompt, label probabilities) where a wrong label can be corrected, and for two runs the "
        "paired comparison and the rows whose verdicts differ. Run files are only read; corrections are appended to "
        "corrections.jsonl beside the set (apply them with 'judgelab calibrate --corrections FILE').",
    )
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="calibrate output folder or scores.jsonl (one, or two to compare), or a bench folder "
                   "(judgelab bench --out DIR): its rows where the judges disagree")
    p.add_argument("--set", dest="set", metavar="FILE|KIND:PATH",
                   help="the labelled set, for documents and claims (default: the set metrics.json names)")
    p.add_argument("--corrections", metavar="FILE", help="where label corrections go (default: corrections.jsonl beside the set)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; another needs --allow-remote "
                   "and --api-key)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host (with --api-key)")
    p.add_argument("--api-key", default=None, help="require this key (default: $JUDGELAB_API_KEY; unset: no key)")
    p.add_argument("--who", default=None, help="the name corrections are made under (default: your login name)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of the paired comparison (default 1000)")
    p.add_argument("--no-browser", action="store_true", help="do not open the browser")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgelab.errors import ParameterError
    from judgelab.view import ViewConfig, ViewServer, check_address, check_port, create_app, load_view_run

    if len(args.runs) > 2:
        raise ParameterError(f"judgelab view takes one run, or two to compare; got {len(args.runs)}.")
    api_key = args.api_key or os.environ.get("JUDGELAB_API_KEY") or None
    check_address(args.host, allow_remote=args.allow_remote, api_key=api_key)
    check_port(args.host, args.port)  # before the runs are read: a taken port is the first thing said
    log_level = ["warning", "info", "debug"][min(getattr(args, "verbose", 0), 2)]
    from judgelab.bench import is_bench

    if len(args.runs) == 1 and is_bench(args.runs[0]):
        from judgelab.view import create_bench_app

        app = create_bench_app(args.runs[0], api_key=api_key)
        print(f"judgelab view: bench {args.runs[0]}: {len(app.state.bench_rows)} rows")
    else:
        runs = [load_view_run(r, set_spec=args.set, corrections=args.corrections) for r in args.runs]
        config = ViewConfig(api_key=api_key, n_resamples=args.resamples)
        if args.who:
            config = dataclasses.replace(config, who=args.who)
        app = create_app(runs, config)
        for r in runs:
            print(f"judgelab view: {r.name}: {len(r.records)} rows, tasks {', '.join(r.tasks)}; corrections go to "
                  f"{r.corrections}")
    server = ViewServer(app, host=args.host, port=args.port, log_level=log_level)
    server.start()
    print(f"judgelab view: {server.url}/  (Ctrl-C stops)", flush=True)
    if not args.no_browser:
        import webbrowser

        webbrowser.open(f"{server.url}/")
    try:
        while server.thread is not None and server.thread.is_alive():
            server.thread.join(0.5)
    except KeyboardInterrupt:
        print("judgelab view: stopping", file=sys.stderr)
    finally:
        server.stop()
    return 0
