"""Are two ``judgelab calibrate`` output folders the same run? (behaviour-preservation check)

Compares ``scores.jsonl`` per row id (every field but the timing ``seconds``
and the fields in ``--ignore-fields``, by default the hashes newer records
add) and ``metrics.json`` exactly, but for its top-level ``version`` (written
since metrics.json version 2; a version-1 file has none): when only that
differs the runs are "IDENTICAL (but for the version field)". Prints the
differences (metrics.json ones by key path) and exits 1 when there are any.

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


def compare(a: Path, b: Path, ignored: set[str]) -> tuple[list[str], str]:
    problems = []
    ra, rb = _records(a / "scores.jsonl", ignored), _records(b / "scores.jsonl", ignored)
    if set(ra) != set(rb):
        problems.append(f"row ids differ: only in A {sorted(set(ra) - set(rb))[:5]}, only in B {sorted(set(rb) - set(ra))[:5]}")
    for rid in sorted(set(ra) & set(rb)):
        if ra[rid] != rb[rid]:
            keys = sorted(k for k in set(ra[rid]) | set(rb[rid]) if ra[rid].get(k) != rb[rid].get(k))
            problems.append(f"scores.jsonl row {rid}: {', '.join(keys)} differ")
    version_note = ""
    ma, mb = _metrics(a), _metrics(b)
    va, vb = ma.pop("version", None), mb.pop("version", None)
    if ma != mb:
        problems.append("metrics.json differs: " + "; ".join(_differences(ma, mb)[:20]))
    elif va != vb:
        version_note = f" (but for the version field: A {_version(va)}, B {_version(vb)})"
    return problems, version_note


def _metrics(run: Path) -> dict:
    """metrics.json with NaN read as the string "NaN" (so two NaNs compare equal)."""
    return json.loads((run / "metrics.json").read_text(encoding="utf-8"), parse_constant=str)


def _version(v: object) -> str:
    return "has none" if v is None else f"has {v}"


def _differences(a: object, b: object, path: str = "") -> list[str]:
    """The key paths where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k} only in {'A' if k in a else 'B'}" for k in sorted(set(a) ^ set(b), key=str)]
        for k in sorted(set(a) & set(b), key=str):
            out += _differences(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path or '(top)'}: {a!r} != {b!r}"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--ignore-fields", default=",".join(DEFAULT_IGNORED),
                    help=f"record fields to leave out (default {','.join(DEFAULT_IGNORED)})")
    args = ap.parse_args()
    ignored = {f for f in args.ignore_fields.split(",") if f}
    problems, version_note = compare(args.a, args.b, ignored)
    n = len(_records(args.a / "scores.jsonl", ignored))
    for p in problems[:50]:
        print(p)
    verdict = f"IDENTICAL{version_note}" if not problems else "DIFFERENT"
    print(f"{verdict}: {n} records (ignoring {sorted(ignored)}) and metrics.json")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
