"""Are two ``judgelab calibrate`` output folders the same run? (behaviour-preservation check)

Compares ``scores.jsonl`` per row id (every field but the timing ``seconds``
and the fields in ``--ignore-fields``, by default the hashes newer records
add) and ``metrics.json`` exactly. Prints the differences and exits 1 when
there are any.

    python benchmarks/same_run.py /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEFAULT_IGNORED = ("seconds", "row_hash", "evaluator_hash")


def _records(path: Path, ignored: set[str]) -> dict[str, dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[rec["id"]] = {k: v for k, v in rec.items() if k not in ignored}
    return out


def compare(a: Path, b: Path, ignored: set[str]) -> list[str]:
    problems = []
    ra, rb = _records(a / "scores.jsonl", ignored), _records(b / "scores.jsonl", ignored)
    if set(ra) != set(rb):
        problems.append(f"row ids differ: only in A {sorted(set(ra) - set(rb))[:5]}, only in B {sorted(set(rb) - set(ra))[:5]}")
    for rid in sorted(set(ra) & set(rb)):
        if ra[rid] != rb[rid]:
            keys = sorted(k for k in set(ra[rid]) | set(rb[rid]) if ra[rid].get(k) != rb[rid].get(k))
            problems.append(f"scores.jsonl row {rid}: {', '.join(keys)} differ")
    ma = json.loads((a / "metrics.json").read_text(encoding="utf-8"))
    mb = json.loads((b / "metrics.json").read_text(encoding="utf-8"))
    if ma != mb:
        problems.append("metrics.json differs")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--ignore-fields", default=",".join(DEFAULT_IGNORED),
                    help=f"record fields to leave out (default {','.join(DEFAULT_IGNORED)})")
    args = ap.parse_args()
    ignored = {f for f in args.ignore_fields.split(",") if f}
    problems = compare(args.a, args.b, ignored)
    n = len(_records(args.a / "scores.jsonl", ignored))
    for p in problems[:50]:
        print(p)
    print(f"{'IDENTICAL' if not problems else 'DIFFERENT'}: {n} records (ignoring {sorted(ignored)}) and metrics.json")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
