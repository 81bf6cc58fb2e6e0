"""Which relevancy prompt lets a fact-check-tuned judge read relevancy, measured where the template was not chosen.

    python benchmarks/relevancy_templates.py --data ../shared/data --squad runs/squad/train-v1.1.json \\
        --out runs/relevancy-templates --results benchmarks/results/relevancy/templates-LABEL.json

Spring AI's relevancy prompt puts the query, then the response, then the context, and asks whether the
response "is in line with" the context. The shipped judge was tuned on the fact-check prompt alone (a
document, then a claim), and reads relevancy rows at chance on HaluEval. This benchmark scores the same
rows under several relevancy templates, each a ``RelevancyEvaluator(prompt_template=...)``:

- the template is **chosen** on SQuAD v1.1 train relevancy rows (``import_squad_relevancy``: no shipped
  adapter trained on them; the best mean AUROC over the judges wins);
- it is **reported** on HaluEval QA relevancy rows (evaluation-only, never used to choose) and on the
  starter set's relevancy rows, as the paired AUROC difference from Spring AI's template on the same rows,
  with a unit-clustered bootstrap interval (each AUROC's own interval resamples rows), and the AUROC of the
  replies that answer against each kind of reply that does not.

Scores go to ``OUT/<judge>/<template>/<set>.jsonl`` (resumable). The results file is written with
``results_file.write_results`` (command, commit, dirty flag, CPU flags, versions).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_file import script_argv, write_results  # noqa: E402

from judgelab import RelevancyEvaluator, load_model  # noqa: E402
from judgelab.calibration import LabelledRow, import_set, resolve_set, run  # noqa: E402
from judgelab.calibration.analysis import bootstrap_interval, paired_difference  # noqa: E402
from judgelab.evaluators import DEFAULT_FACT_CHECK_TEMPLATE, DEFAULT_RELEVANCY_TEMPLATE  # noqa: E402

#: The fact-check prompt the judge was tuned on, with the document and the claim placeholders cut out.
_FACT_CHECK_HEAD = DEFAULT_FACT_CHECK_TEMPLATE.split("Document:")[0]

TEMPLATES: dict[str, str] = {
    "spring-ai": DEFAULT_RELEVANCY_TEMPLATE,
    # The relevancy question asked as the fact-check question the judge was tuned on: is "the answer to the
    # query is the response" supported by the context?
    "claim-answer-is": _FACT_CHECK_HEAD + 'Document:\n{context}\nClaim:\nThe answer to the question "{query}" is: {response}',
    "claim-question-answer": _FACT_CHECK_HEAD + "Document:\n{context}\nClaim:\nQuestion: {query}\nAnswer: {response}",
    # The context first, the question last: what the answer must be read against comes before it.
    "context-first": (
        "Context:\n{context}\n\nQuestion:\n{query}\n\nResponse:\n{response}\n\n"
        "Does the response answer the question, in line with the context? Answer YES or NO."
    ),
}


def _auroc(y: np.ndarray, s: np.ndarray) -> float:
    return float(roc_auc_score(y, s))


def _by_kind(rows: Sequence[LabelledRow], y: np.ndarray, s: np.ndarray) -> dict[str, float]:
    """AUROC of the replies that answer (label 1) against each kind of reply that does not (``meta["kind"]``)."""
    kinds = np.array([str((r.meta or {}).get("kind", "?")) for r in rows])
    out = {}
    for kind in sorted(set(kinds[y == 0])):
        keep = (y == 1) | (kinds == kind)
        out[kind] = _auroc(y[keep], s[keep])
    return out


def _sample(rows: Sequence[LabelledRow], units: int) -> list[LabelledRow]:
    """The rows of ``units`` units spread evenly over the file (deterministic; whole units, many articles)."""
    order = list(dict.fromkeys(r.unit for r in rows))
    step = max(1, len(order) // units)
    chosen = set(order[::step][:units])
    return [r for r in rows if r.unit in chosen]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="the shared data folder (halueval/ ...)")
    ap.add_argument("--squad", type=Path, required=True, help="SQuAD v1.1 train JSON (benchmarks/squad_from_explorer.py)")
    ap.add_argument("--judge", action="append", default=[], help="a model id or spec (repeatable; default the shipped judge)")
    ap.add_argument("--template", action="append", choices=sorted(TEMPLATES), default=[],
                    help="a template to score (repeatable; default all)")
    ap.add_argument("--choose-units", type=int, default=12, help="SQuAD paragraphs the template is chosen on")
    ap.add_argument("--report-units", type=int, default=80, help="HaluEval questions it is reported on")
    ap.add_argument("--out", type=Path, default=Path("runs/relevancy-templates"))
    ap.add_argument("--results", type=Path, required=True)
    args = ap.parse_args(argv)
    judges = args.judge or ["gemma-3-270m-judge"]
    templates = args.template or list(TEMPLATES)
    if "spring-ai" not in templates:
        templates.insert(0, "spring-ai")
    sets = {
        "squad-train (choose)": _sample(import_set("squad-relevancy", args.squad), args.choose_units),
        "halueval-qa-relevancy (report)": _sample(
            import_set("halueval-qa-relevancy", args.data / "halueval" / "qa_one-turn.jsonl"), args.report_units),
        "starter relevancy (report)": [r for r in resolve_set(None)[0] if r.task == "relevancy" and r.split == "test"],
    }
    scores: dict[tuple[str, str, str], np.ndarray] = {}
    for judge in judges:
        model = load_model(judge)
        try:
            for name in templates:
                evaluator = RelevancyEvaluator(model, prompt_template=TEMPLATES[name])
                folder = args.out / judge.replace("/", "_") / name
                for set_name, rows in sets.items():
                    records = run(evaluator, rows, out=folder / f"{set_name.split()[0]}.jsonl", progress=False)
                    by_id = {rec.id: rec.score for rec in records}
                    s = scores[judge, name, set_name] = np.array([by_id[r.id] for r in rows], dtype=float)
                    print(f"{judge} {name} {set_name}: AUROC {_auroc(np.array([r.label for r in rows]), s):.3f}",
                          flush=True)
        finally:
            model.close()

    table: dict[str, dict[str, object]] = {}
    for set_name, rows in sets.items():
        y = np.array([int(r.label) for r in rows])
        units = [r.unit for r in rows]
        cells: dict[str, object] = {"rows": len(rows), "units": len(set(units)), "positives": int(y.sum())}
        for judge in judges:
            for name in templates:
                s = scores[judge, name, set_name]
                auroc = bootstrap_interval(_auroc, y, s)
                cell: dict[str, object] = {"auroc": {"estimate": auroc.estimate, "low": auroc.low, "high": auroc.high},
                                           "by_kind": _by_kind(rows, y, s)}
                if name != "spring-ai":
                    d = paired_difference(_auroc, [y], [scores[judge, "spring-ai", set_name]], [s], units=units)
                    cell["vs_spring_ai"] = {"estimate": d.estimate, "low": d.low, "high": d.high}
                cells[f"{judge} / {name}"] = cell
        table[set_name] = cells
    choose = "squad-train (choose)"
    chosen = max(templates, key=lambda n: np.mean([table[choose][f"{j} / {n}"]["auroc"]["estimate"]  # type: ignore[index]
                                                   for j in judges]))
    write_results(args.results, {"templates": TEMPLATES, "judges": judges, "sets": table, "chosen": chosen,
                                 "chosen_on": choose},
                  scrub={args.data: "DATA", args.squad: "SQUAD", args.out: "OUT"},
                  argv=script_argv(__file__, argv))
    for set_name, cells in table.items():
        print(f"\n{set_name}: {cells['rows']} rows, {cells['units']} units")
        for key, cell in cells.items():
            if isinstance(cell, dict):
                a = cell["auroc"]
                d = cell.get("vs_spring_ai")
                vs = "" if d is None else f"  vs spring-ai {d['estimate']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"
                print(f"  {key:45s} {a['estimate']:.3f} [{a['low']:.3f}, {a['high']:.3f}]{vs}")
                print("  " + " " * 45 + " by kind: " + ", ".join(f"{k} {v:.3f}" for k, v in cell["by_kind"].items()))
    print(f"\nchosen on SQuAD train: {chosen}\nresults: {args.results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
