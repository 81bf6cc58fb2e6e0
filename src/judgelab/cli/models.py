"""``judgelab models``: list judge model specs and where their weights are."""

from __future__ import annotations

import argparse
import sys

from judgelab.specs import DEFAULT_MODEL_ID, WeightSource, load_spec, scan_specs
from judgelab.weights import pull, weights_status


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("models", help="list judge models and whether their weights are here")
    sub = p.add_subparsers(dest="models_command", metavar="ACTION")
    pull_p = sub.add_parser("pull", help="download a model's weights from Hugging Face (needs internet)")
    pull_p.add_argument("model_id")
    pull_p.set_defaults(func=_pull)
    p.set_defaults(func=_list)


def _list(args: argparse.Namespace) -> int:
    scan = scan_specs()
    for problem in scan.problems:
        print(f"judgelab models: skipped a bad spec: {problem}", file=sys.stderr)
    for clash in (scan.duplicates or {}).values():
        print(f"judgelab models: error: {clash}", file=sys.stderr)
    specs = list(scan.specs)
    if not specs:
        print("No model specs found (looked in JUDGELAB_MODELS_PATH, the package and ./models).")
        return 2 if scan.duplicates or scan.problems else 1
    width = max(len(s.id) for s in specs) + (2 if any(s.id == DEFAULT_MODEL_ID for s in specs) else 0)
    for spec in specs:
        status = weights_status(spec)
        name = spec.id + (" *" if spec.id == DEFAULT_MODEL_ID else "")
        state = f"present ({status.source}): {status.path}" if status.present else f"missing: {status.hint}"
        print(f"{name:<{width}}  family={spec.family:<9} backends={','.join(spec.backends):<22} {state}")
        if spec.description:
            print(f"{'':<{width}}  {spec.description}")
        print(f"{'':<{width}}  licence: {spec.licence or 'not stated in the spec: check the weights source'}")
        print(f"{'':<{width}}  sources: {'; '.join(_source(w) for w in spec.weights) or 'none'}")
    print("\n* embedded default. Weights of a missing model: see the hint, or `judgelab models pull ID`.")
    return 2 if scan.duplicates else 0


def _source(w: WeightSource) -> str:
    return w.describe() + (f" (sha256 {w.sha256[:12]}...)" if w.sha256 else "")


def _pull(args: argparse.Namespace) -> int:
    path = pull(load_spec(args.model_id))
    print(f"{args.model_id}: {path}")
    return 0
