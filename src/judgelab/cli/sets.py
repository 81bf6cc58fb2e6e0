"""``judgelab sets``: import public data sets into labelled JSONL, and validate sets."""

from __future__ import annotations

import argparse

from judgelab.cli._options import print_help_of


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("sets", help="import or validate labelled sets")
    sub = p.add_subparsers(dest="sets_command", metavar="ACTION")
    imp = sub.add_parser(
        "import",
        help="convert a public data set into judgelab's labelled JSONL",
        description="KIND is one of wice, halueval-qa, halueval-general, faithbench, llm-aggrefact, summedits, "
                    "snli, mnli, fever-nli, fib, factcg, begin.",
    )
    imp.add_argument("kind", metavar="KIND")
    imp.add_argument("path", metavar="PATH", help="the data set's file (a dataset id or folder for llm-aggrefact)")
    imp.add_argument("--out", required=True, help="JSONL file to write")
    imp.add_argument("--split", choices=("dev", "test"), help="stamp this split on every row (wice)")
    imp.add_argument("--questionable", choices=("drop", "pass", "fail"), default="drop",
                     help="faithbench: what to do with Questionable rows (default drop)")
    imp.set_defaults(func=run_import)
    sc = sub.add_parser(
        "shortcuts", help="can the label be read without the document? claim-only and length baselines",
        description="Scores SET's fact-check rows without the evidence: a claim-only bag-of-words model (out of "
                    "fold, by group) and the document's and claim's lengths, each as AUROC with a 95%% interval. "
                    "A set that teaches reading documents keeps all three near 0.5. SET is any --set of "
                    "calibrate, e.g. d2c:fib:../shared/data/fib or num:fever-nli:../shared/data/fever_nli (hard-negative "
                    "generators: d2c, num, swap, partial).")
    sc.add_argument("set", metavar="SET")
    sc.add_argument("--limit", type=int, help="check at most this many rows (a seeded sample)")
    sc.set_defaults(func=run_shortcuts)
    ov = sub.add_parser(
        "overlap", help="contamination check: rows of EVAL that share text with rows of TRAIN sets",
        description="For each row of EVAL, finds rows of each TRAIN set that share the row (documents and claim), a "
                    "document, the claim, a sentence of at least --min-sentence-chars normalised characters, or a "
                    "near-duplicate document (word-shingle Jaccard >= --near-duplicate). EVAL and TRAIN are any "
                    "--set of calibrate (a JSONL file, KIND:PATH, GENERATOR:SET with d2c, num, swap or partial). "
                    "Prints counts by kind and by set with the first pairs; --out writes every pair as JSON (evaluation id, training "
                    "set and id, kind, the shared text), --clean-out the rows of EVAL that overlap nothing; exit 1 with "
                    "--fail when any row overlaps.")
    ov.add_argument("evaluation", metavar="EVAL")
    ov.add_argument("--against", nargs="+", required=True, metavar="TRAIN", help="the training sets or pools")
    ov.add_argument("--out", help="write the findings, every overlapping pair included, as JSON to this file")
    ov.add_argument("--clean-out", metavar="JSONL", help="write the rows of EVAL that overlap no training row to this file")
    ov.add_argument("--fail", action="store_true", help="exit 1 when any evaluation row overlaps a training row")
    ov.add_argument("--min-sentence-chars", type=int, default=60, help="shortest shared sentence that counts (60)")
    ov.add_argument("--min-claim-chars", type=int, default=20, help="shortest repeated claim that counts (20)")
    ov.add_argument("--near-duplicate", type=float, default=0.5,
                    help="shingle Jaccard at or above which two documents are near-duplicates (0.5)")
    ov.set_defaults(func=run_overlap)
    val = sub.add_parser("validate", help="check a labelled JSONL file and print counts")
    val.add_argument("path")
    val.add_argument("--skip-invalid", action="store_true", help="count malformed rows instead of stopping")
    val.set_defaults(func=run_validate)
    p.set_defaults(func=print_help_of(p))


def run_import(args: argparse.Namespace) -> int:
    from judgelab.calibration import import_set, write_rows

    options = {}
    if args.kind == "faithbench":
        options["questionable"] = args.questionable
    if args.split and args.kind in ("wice",):
        options["split"] = args.split
    from judgelab.errors import DataError

    rows = import_set(args.kind, args.path, **options)
    if not rows:
        raise DataError(
            f"No rows were imported from {args.path} as {args.kind}; nothing was written to {args.out}. "
            "Check that the file is the data set KIND names.", path=args.path,
        )
    n = write_rows(rows, args.out)
    pos = sum(r.label for r in rows)
    print(f"wrote {n} rows ({pos} label 1, {n - pos} label 0) to {args.out}")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from collections import Counter

    from judgelab.calibration import load_rows
    from judgelab.errors import DataError

    ls = load_rows(args.path, skip_invalid=args.skip_invalid)
    if not ls.rows:
        raise DataError(
            f"{args.path} holds no valid rows ({len(ls.skipped)} skipped). A labelled set needs one JSON "
            "object per line; see 'judgelab sets import' to convert a public data set.", path=args.path,
        )
    counts = Counter((r.task, r.label) for r in ls.rows)
    print(f"{args.path}: {len(ls.rows)} valid rows, {len(ls.skipped)} skipped")
    for (task, label), n in sorted(counts.items()):
        print(f"  {task} label {label}: {n}")
    for _line, msg in ls.skipped[:20]:
        print(f"  skipped {msg}")
    return 0


def run_shortcuts(args: argparse.Namespace) -> int:
    import numpy as np

    from judgelab.calibration import resolve_set, shortcut_baselines

    rows, desc, _ = resolve_set(args.set)
    if args.limit is not None and len(rows) > args.limit:
        keep = np.random.default_rng(0).choice(len(rows), size=args.limit, replace=False)
        rows = [rows[i] for i in sorted(keep)]
    report = shortcut_baselines(rows)
    print(f"{desc}: {report.n} fact-check rows; AUROC without reading the document (0.5 = no shortcut)")
    print(f"  claim only (bag of words, out of fold): {report.claim_only}")
    print(f"  document length:                        {report.document_length}")
    print(f"  claim length:                           {report.claim_length}")
    return 0


def run_overlap(args: argparse.Namespace) -> int:
    import json
    from collections.abc import Iterator
    from pathlib import Path

    from judgelab.calibration import LabelledRow, OverlapOptions, overlap_report, resolve_set, write_rows

    options = OverlapOptions(min_sentence_chars=args.min_sentence_chars, min_claim_chars=args.min_claim_chars,
                             near_duplicate=args.near_duplicate)
    evaluation, desc, _ = resolve_set(args.evaluation)

    def training_sets() -> Iterator[tuple[str, list[LabelledRow]]]:  # read one at a time: a pool is streamed past the index, never held twice
        for spec in args.against:
            rows, name, _ = resolve_set(spec)
            yield name, rows

    report = overlap_report(evaluation, training_sets(), evaluation_name=desc, options=options)
    print(f"{desc}: {report.n_rows} rows checked against {sum(report.n_checked.values())} rows of "
          f"{len(report.n_checked)} set(s)")
    print(f"  rows with an overlap: {report.n_contaminated} of {report.n_rows}")
    for kind, n in report.contaminated.items():
        if kind != "any":
            print(f"    {kind:<15} {n}")
    for name, kinds in report.by_source.items():
        for kind, entry in kinds.items():
            first = ", ".join(f"{e} ~ {t}" for e, t, _ in entry["first"][:3])
            print(f"  {name}: {kind}: {entry['rows']} rows ({entry['pairs']} pairs), first: {first}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}: {len(report.pairs)} overlapping pair(s)")
    if args.clean_out:
        clean = report.clean_rows(evaluation)
        write_rows(clean, args.clean_out)
        print(f"wrote {args.clean_out}: the {len(clean)} of {report.n_rows} rows of {desc} that overlap no training row")
    if args.fail and not report.clean:
        print(f"contaminated: {report.n_contaminated} row(s) of {desc} overlap a training row (--fail)")
        return 1
    return 0
