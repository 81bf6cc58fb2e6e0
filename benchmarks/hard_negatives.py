"""The hard-negative generators on the clean training pool: how many pairs, and whether the label shows without the document.

    nice -n 19 python benchmarks/hard_negatives.py

For each generator (``num:``, ``swap:``, ``partial:``; and ``partial`` with
the parent's claim alone as the twin, to show why the default joins both
twins) over each source the shipped recipe trains on
(``train_default_judge.py``'s ``SOURCES`` with rows > 0, generators there
left out), with the recipe's exclusion applied before generation (no row that
overlaps the quick start's set, ``--exclude``), it reports the parents (the
consistent fact-check rows), the rows generated, the pair yield (pairs per
parent), the edits by kind, and the claim-only and length baselines of
``shortcut_baselines`` (the function behind ``judgelab sets shortcuts``:
AUROC with 95% bootstrap intervals; 0.5 = no shortcut) on the generated rows,
a seeded sample of at most ``--max-pairs`` pairs per cell. It writes
``benchmarks/results/generators/shortcuts.json`` after every source (``results_file.write_results``:
this script's command, the commit and whether the tree was dirty, the CPU model and its instruction-set
flags, llama.cpp's system info, the core count and the library versions; ``--data`` shown as ``DATA``)
with the load average before the run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402
from train_default_judge import SOURCES  # noqa: E402

#: Generators measured: (name in the results, set prefix, keyword arguments of the library function)
GENERATED = (("num", "num", {}), ("swap", "swap", {}), ("partial", "partial", {}),
             ("partial_original_twin", "partial", {"twin": "original"}))
#: The sources the ``partial_original_twin`` contrast is measured on (it only shows why the default joins both twins).
CONTRAST_SOURCES = ("fever", "factcg")


def recipe_sources(data: Path) -> list[tuple[str, str]]:
    """(short name, set spec) of every source the shipped recipe trains on, generators left out."""
    from judgelab.calibration import GENERATORS

    return [(name, s.format(data=data)) for name, s, rows in SOURCES
            if rows > 0 and s.split(":", 1)[0] not in GENERATORS]


def _interval(i) -> dict:
    return {"auroc": round(i.estimate, 3), "low": round(i.low, 3), "high": round(i.high, 3)}


def _sample_pairs(rows: list, max_pairs: int, seed: int = 0) -> list:
    """At most ``max_pairs`` whole pairs (by unit), a seeded sample, in row order."""
    import numpy as np

    units = sorted({r.unit for r in rows})
    if len(units) <= max_pairs:
        return rows
    keep = set(np.random.default_rng(seed).choice(len(units), size=max_pairs, replace=False).tolist())
    chosen = {units[i] for i in keep}
    return [r for r in rows if r.unit in chosen]


def measure(name: str, generator, parents: list, max_pairs: int, resamples: int) -> dict:
    from judgelab.calibration import shortcut_baselines
    from judgelab.errors import DataError

    eligible = [r for r in parents if r.task == "fact-check" and r.label == 1 and r.documents]
    start = time.perf_counter()
    rows = generator(parents)
    seconds = time.perf_counter() - start
    pairs = len(rows) // 2
    out: dict = {"parents": len(eligible), "rows": len(rows), "pairs": pairs,
                 "pair_yield": round(pairs / len(eligible), 3) if eligible else None,
                 "edits": dict(Counter(str(r.meta.get("edit", r.meta.get("twin", ""))) for r in rows if r.label == 0)),
                 "generate_seconds": round(seconds, 2)}
    sample = _sample_pairs(rows, max_pairs)
    try:
        report = shortcut_baselines(sample, n_resamples=resamples)
    except DataError as exc:
        out["shortcuts_skipped"] = str(exc)
        print(f"{name}: {len(eligible)} parents -> {pairs} pairs; no shortcut check: {exc}", flush=True)
        return out
    out["shortcut_rows"] = report.n
    out["claim_only"] = _interval(report.claim_only)
    out["document_length"] = _interval(report.document_length)
    out["claim_length"] = _interval(report.claim_length)
    if rows:
        neg = next(r for r in rows if r.label == 0)
        pos = next(r for r in rows if r.label == 1 and r.unit == neg.unit)
        out["example"] = {"kept": pos.response[:300], "edited": neg.response[:300],
                          "meta": {k: v for k, v in neg.meta.items() if k in ("generator", "from", "to", "edit", "clause")}}
    print(f"{name}: {len(eligible)} parents -> {pairs} pairs (yield {out['pair_yield']}); claim only "
          f"{report.claim_only}, document length {report.document_length}, claim length {report.claim_length}",
          flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--exclude", type=Path, default=REPO / "calibration" / "starter.jsonl",
                   help="rows overlapping this set are dropped before generation (the recipe's --exclude)")
    p.add_argument("--sources", help="comma-separated short names, in this order (default: every recipe source)")
    p.add_argument("--max-pairs", type=int, default=1500, help="pairs per generator and source the shortcut check reads")
    p.add_argument("--resamples", type=int, default=1000,
                   help="bootstrap resamples of each interval (1000, as judgelab sets shortcuts; fewer on a busy machine)")
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "generators" / "shortcuts.json")
    args = p.parse_args(argv)
    args.loadavg_before = os.getloadavg()
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.calibration import GENERATORS, Exclusion, OverlapIndex, partial_pairs, resolve_set

    index = OverlapIndex(resolve_set(str(args.exclude))[0])
    results: dict = {}
    excluded: dict = {}
    sources = dict(recipe_sources(args.data))
    for source in args.sources.split(",") if args.sources else sources:
        spec = sources[source]
        exclusion = Exclusion(index)
        parents, _, _ = resolve_set(spec, exclude=exclusion)
        excluded[source] = {"read": len(parents) + sum(sum(c.values()) for c in exclusion.dropped.values()),
                            "dropped": sum(sum(c.values()) for c in exclusion.dropped.values())}
        for name, prefix, kwargs in GENERATED:
            if kwargs and source not in CONTRAST_SOURCES:
                continue
            generator = (lambda rows, kw=kwargs: partial_pairs(rows, **kw)) if kwargs else GENERATORS[prefix]
            results.setdefault(name, {})[source] = measure(f"{name}:{source}", generator, parents, args.max_pairs,
                                                   args.resamples)
        write(args, argv, excluded, results)  # after every source: a long run keeps what it measured
    print(f"wrote {args.out}")
    return 0


def write(args: argparse.Namespace, argv: list[str] | None, excluded: dict, results: dict) -> None:
    result = {
        "loadavg_before": args.loadavg_before,
        "exclude": str(args.exclude.relative_to(REPO)) if args.exclude.is_relative_to(REPO) else str(args.exclude),
        "max_pairs": args.max_pairs, "resamples": args.resamples, "sources": {s: spec.replace(str(args.data), "DATA") for s, spec in
                                                  recipe_sources(args.data)},
        "excluded": excluded, "generators": results,
    }
    write_results(args.out, result, scrub={args.data.absolute(): "DATA"},
                  argv=script_argv(__file__, argv))


if __name__ == "__main__":
    sys.exit(main())
