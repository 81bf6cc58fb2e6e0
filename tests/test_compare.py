"""``judgelab compare``: rows that share ``meta.pair`` are resampled together, and the output says so."""

from __future__ import annotations

import json

import numpy as np

from judgelab.cli import main


def _write(path, rows, *, with_pairs: bool):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            rec = {k: v for k, v in r.items() if with_pairs or k != "fold_group"}
            fh.write(json.dumps(rec) + "\n")
    return path


def _runs(n_pairs=60, seed=0):
    """Two judges; within a pair both rows have the same label and the same scores (a planted correlation)."""
    rng = np.random.default_rng(seed)
    a, b = [], []
    for p in range(n_pairs):
        y = int(rng.integers(0, 2))
        sa = float(rng.beta(3, 1.5) if y else rng.beta(1.5, 3))
        sb = float(rng.beta(2, 1.5) if y else rng.beta(1.5, 2))
        for k in range(2):
            common = {"id": f"p{p}-{k}", "task": "fact-check", "label": y, "fold_group": f"pair{p}"}
            a.append({**common, "score": sa})
            b.append({**common, "score": sb})
    return a, b


def _compare(tmp_path, capsys, name, *, with_pairs):
    a, b = _runs()
    ra = _write(tmp_path / name / "a.jsonl", a, with_pairs=with_pairs)
    rb = _write(tmp_path / name / "b.jsonl", b, with_pairs=with_pairs)
    assert main(["compare", str(ra), str(rb), "--resamples", "400", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["compare", str(ra), str(rb), "--resamples", "400"]) == 0
    return doc, capsys.readouterr().out


def test_paired_rows_widen_the_intervals_and_the_output_says_so(tmp_path, capsys):
    grouped, text_grouped = _compare(tmp_path, capsys, "pairs", with_pairs=True)
    ignored, text_ignored = _compare(tmp_path, capsys, "rows", with_pairs=False)
    assert grouped["resampling"] == {"rows": 120, "groups": 60, "by_pair": True}
    assert ignored["resampling"] == {"rows": 120, "groups": 120, "by_pair": False}
    assert "60 meta.pair groups of 120 rows resampled together" in text_grouped
    assert "120 rows resampled one by one" in text_ignored

    def width(doc, k):
        d = doc["difference_b_minus_a"][k]
        return d["high"] - d["low"]

    for k in ("accuracy", "balanced_accuracy", "auroc", "brier"):
        # each pair is one row twice: the honest interval is about sqrt(2) wider
        assert width(grouped, k) > 1.15 * width(ignored, k), (k, width(grouped, k), width(ignored, k))
        # the point estimates do not depend on how rows are resampled
        assert grouped["difference_b_minus_a"][k]["estimate"] == ignored["difference_b_minus_a"][k]["estimate"]
