"""Keep a finished tuning run's record as a results file, so that a page may quote it.

    python benchmarks/training_record.py runs/rel2 --results benchmarks/results/tuning/rel2-training.json

``judgelab tune`` writes ``RUN/PROVENANCE.json`` (the training command and the commit it ran at, the data
and their licences, the counts, steps, tokens, seconds, the held-out evaluations); run folders are not
committed. This copies those fields into a results file (``results_file.write_results``, which records
this copy's own command, commit and CPU beside them), under ``training`` so that the run's commit and
command stay apart from the copy's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import script_argv, write_results  # noqa: E402

KEPT = ("command", "commit", "config", "training_hash", "data", "licences", "exclude", "excluded", "counts",
        "steps", "tokens", "train_seconds", "tokens_per_second", "machine", "python", "torch", "files", "evaluations")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a finished tune run folder (with PROVENANCE.json)")
    ap.add_argument("--results", type=Path, required=True)
    args = ap.parse_args(argv)
    source = args.run / "PROVENANCE.json"
    try:
        provenance = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"{source}: not a finished tune run's provenance ({exc}); finish the run first") from exc
    training = {key: provenance[key] for key in KEPT if key in provenance}
    write_results(args.results, {"training": training}, scrub={args.run: "RUN"},
                  argv=script_argv(__file__, argv))
    print(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
