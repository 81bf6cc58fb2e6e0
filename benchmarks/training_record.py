"""Keep a finished tuning run's record as a results file, so that a page may quote it.

    python benchmarks/training_record.py runs/rel2 --results benchmarks/results/tuning/rel2-training.json

``judgelab tune`` writes ``RUN/PROVENANCE.json`` (the training command and the commit it ran at, the data
and their licences, the counts, steps, tokens, seconds, the held-out evaluations); run folders are not
committed. This copies those fields into a results file (``results_file.write_results``, which records
this copy's own command, commit and CPU beside them), under ``training`` so that the run's commit and
command stay apart from the copy's.

``--report DIR`` also writes ``DIR/report.md`` (and ``loss.png``), the run's tuning report with every measured
figure marked to this results file, so that a shipped judge's report (``models/NAME/report.md``) is checked by
the figures test after each retraining instead of losing its markers:

    python benchmarks/training_record.py runs/rel2 --results benchmarks/results/tuning/rel2-training.json \
        --report models/gemma-3-270m-judge
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import script_argv, write_results  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

KEPT = ("command", "commit", "config", "training_hash", "data", "licences", "exclude", "excluded", "counts",
        "steps", "tokens", "train_seconds", "tokens_per_second", "machine", "python", "torch", "files", "evaluations")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a finished tune run folder (with PROVENANCE.json)")
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--report", type=Path, metavar="DIR",
                    help="also write DIR/report.md with every figure marked to --results (e.g. models/NAME)")
    ap.add_argument("--results-root", type=Path, default=RESULTS,
                    help="the folder the figures' markers name files from (default benchmarks/results)")
    args = ap.parse_args(argv)
    try:
        marked_file = args.results.resolve().relative_to(args.results_root.resolve()).as_posix()
    except ValueError:
        if args.report is not None:
            raise SystemExit(f"--report marks figures to --results, which must lie under {args.results_root} "
                             f"(not {args.results})") from None
        marked_file = None
    source = args.run / "PROVENANCE.json"
    try:
        provenance = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"{source}: not a finished tune run's provenance ({exc}); finish the run first") from exc
    training = {key: provenance[key] for key in KEPT if key in provenance}
    write_results(args.results, {"training": training}, scrub={args.run: "RUN"},
                  argv=script_argv(__file__, argv))
    print(f"wrote {args.results}")
    if args.report is not None:
        from judgelab.tuning import FigureMarks, write_tuning_report

        losses = json.loads((args.run / "losses.json").read_text(encoding="utf-8"))
        args.report.mkdir(parents=True, exist_ok=True)
        # the report shows what the results file holds: the same fields with the machine's paths scrubbed
        scrubbed = json.loads(args.results.read_text(encoding="utf-8"))["training"]
        path = write_tuning_report(args.report, {**provenance, **scrubbed}, [tuple(x) for x in losses],
                                   marks=FigureMarks(str(marked_file), "training"))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
