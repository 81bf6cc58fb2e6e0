"""A small, balanced SummEdits subset for stress runs on a busy CPU.

From each of the five domains: the first 3 original summaries (label 1) and
the first inconsistent edit of each (label 0), 30 rows in 15 pair clusters.

    python benchmarks/summedits_subset.py ../shared/data/summedits runs/summedits-subset.jsonl
"""

from __future__ import annotations

import sys

from judgelab.calibration import import_set, write_rows


def subset(folder: str, per_domain: int = 3) -> list:
    rows = import_set("summedits", folder)
    out, seen = [], {}
    for r in rows:
        fam = seen.setdefault(r.group, {})
        pair = r.meta["pair"]
        if pair not in fam and len(fam) >= per_domain:
            continue
        have = fam.setdefault(pair, set())
        if r.label not in have:
            have.add(r.label)
            out.append(r)
    return out


if __name__ == "__main__":
    rows = subset(sys.argv[1])
    n = write_rows(rows, sys.argv[2])
    print(f"{n} rows, {sum(r.label for r in rows)} labelled 1")
