"""Small labelled subsets for stress runs on a busy CPU (the figures in docs/robustness.md).

summedits: from each of the five domains, the first 3 original summaries
(label 1) and the first inconsistent edit of each (label 0): 30 rows in 15
units (rows sharing meta.pair).

wice-short: the WiCE dev rows with the shortest evidence, 6 supported and 6
not (a biased sample: short evidence, no chunking; say so when quoting it).

    python benchmarks/stress_subsets.py summedits ../shared/data/summedits runs/summedits-subset.jsonl
    python benchmarks/stress_subsets.py wice-short ../shared/data/wice/dev.jsonl runs/wice-short.jsonl
"""

from __future__ import annotations

import sys

from judgelab.calibration import import_set, write_rows


def summedits_subset(folder: str, per_domain: int = 3) -> list:
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


def wice_short(path: str, per_label: int = 6) -> list:
    rows = sorted(import_set("wice", path), key=lambda r: (len(r.documents[0]), r.id))
    pick = [r for r in rows if r.label == 1][:per_label] + [r for r in rows if r.label == 0][:per_label]
    return sorted(pick, key=lambda r: r.id)


if __name__ == "__main__":
    kind, src, dst = sys.argv[1:4]
    rows = {"summedits": summedits_subset, "wice-short": wice_short}[kind](src)
    n = write_rows(rows, dst)
    print(f"{n} rows, {sum(r.label for r in rows)} labelled 1")
