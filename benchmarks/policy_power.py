"""How often a policy is certified, and how much it decides, on synthetic scores (no model).

Labels 50/50; label-1 scores Beta(3, 1.5), label-0 scores Beta(1.5, 3) (AUROC printed). For each
draw of N calibration rows, fit a policy at alpha, delta and measure its true error and coverage
on 20,000 fresh rows. Prints a table and writes JSON.

    python benchmarks/policy_power.py --draws 100 --rows 500
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from sklearn.metrics import roc_auc_score

from judgelab.calibration.policy import LTTSettings, fit_arrays, policy_decisions


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--rows", type=int, nargs="+", default=[500, 2000])
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=0.1)
    ap.add_argument("--out", default="policy_power.json")
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    def draw(n):
        y = rng.integers(0, 2, n)
        return np.where(y == 1, rng.beta(3, 1.5, n), rng.beta(1.5, 3, n)), y

    st, yt = draw(20_000)
    print(f"synthetic judge AUROC {roc_auc_score(yt, st):.3f}; alpha {args.alpha}, delta {args.delta}")
    print("| rows | certified | mean coverage (0 when not) | error > alpha |")
    print("|---|---|---|---|")
    results = []
    for n in args.rows:
        cert, covs, exceed = 0, [], 0
        for k in range(args.draws):
            s, y = draw(n)
            fit = fit_arrays(s, y, settings=LTTSettings(alpha=args.alpha, delta=args.delta, seed=k))
            if not fit.feasible:
                covs.append(0.0)
                continue
            cert += 1
            d = policy_decisions(fit.lower, fit.upper, st)
            dec = d != "abstain"
            err = (((d == "pass") & (yt == 0)) | ((d == "fail") & (yt == 1))).sum() / max(dec.sum(), 1)
            covs.append(float(dec.mean()))
            exceed += err > args.alpha
        row = {"rows": n, "certified": cert / args.draws, "coverage": float(np.mean(covs)), "exceed": exceed / args.draws}
        results.append(row)
        print(f"| {n} | {row['certified']:.2f} | {row['coverage']:.3f} | {row['exceed']:.2f} |")
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
