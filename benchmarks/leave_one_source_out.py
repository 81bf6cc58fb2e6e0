"""The leave-one-source-out table of docs/tuning.md: for each source, train on all the others, measure on it.

    PYTHONPATH=src python benchmarks/leave_one_source_out.py --runs /work/tune-runs/loso \
        [--sources fib,factcg] [--scale 0.25]

For each source S (``train_default_judge.py``'s option names):

1. ``train_default_judge.py --leave-out S`` (its deletion negatives leave with it: ``d2c_fib`` with
   ``fib``), with every other source's rows multiplied by ``--scale``;
2. the evaluation rows: up to ``--limit`` rows of S (the run holds S out whole), whole groups
   (``LabelledRow.unit``: a document's rows) drawn in a seeded random order, written to ``RUNS/eval-S.jsonl``;
3. ``judgelab calibrate`` of the base ``gemma-3-270m`` and of the run's tuned spec on those rows
   (llama.cpp, as users score), then ``judgelab compare`` (tuned minus base, paired by group).

``--compare-with OTHER`` pairs each fold's tuned judge with the same fold's tuned judge in OTHER
(another training setting, same rows): ``judgelab compare OTHER/cal-S-tuned RUNS/cal-S-tuned``, this
run minus OTHER, kept as ``versus`` in ``table.json``. The base model's calibration does not depend
on the setting, so it is copied from OTHER where OTHER has it.

``--rows NAME=N`` adds one of ``train_default_judge.py``'s optional sources to every fold's training
(hard negatives such as ``num_fever``, sentence rows), e.g. the SummEdits fold with hard negatives made
from the other sources: ``--sources summedits --rows num_fever=120 --rows swap_factcg=120 ...``; a
generated source whose parent is left out is not read. Its rows are kept in ``table.json``.

A paired interval resamples the evaluation rows, not the training run: two seeds of one recipe
differed by -0.082 AUROC on the quarter-size FIB fold, beyond that interval (docs/tuning.md). So compare
two training settings with at least two seeds each: ``--seed 1 --runs OTHER_SEED1 --compare-with ...``.

Every step resumes: a training run continues from its checkpoint, a calibration from its scores,
so the same command picks up where it stopped. It prints one markdown row per finished source
(AUROC and balanced accuracy at each run's shipped threshold, on its held-out test rows, with 95%
intervals; the paired differences on all rows) and writes ``RUNS/table.md`` and ``RUNS/table.json``
(with each fold's training steps, tokens and tokens/s from its ``PROVENANCE.json``).

Budget: one ``--scale 1`` fold trains about 205-240 steps, 365-490k tokens: about 17-29 minutes of training
on a 2-core Intel Xeon (docs/tuning.md), so seven sources take seven times that; ``--scale 0.25`` about a quarter.
On a 2-core AMD EPYC (AVX2) a ``--scale 2`` fold (the shipped size) trained 408 steps, 536k tokens in 72 minutes
(FIB left out). On a 2-core CPU, run it over several sessions (each rerun resumes), or on a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("mnli", "fever", "snli", "fib", "factcg", "begin", "summedits")
#: Sources made from a source's rows leave with it.
DERIVED = {"fib": ("d2c_fib",), "summedits": ("d2c_summedits",)}


def _run(cmd: list[str], log: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        subprocess.run(cmd, check=True, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=REPO)


def _heldout_figures(run: Path) -> dict:
    """AUROC and balanced accuracy (estimate, low, high) on the run's held-out test rows."""
    task = json.loads((run / "metrics.json").read_text())["tasks"]["fact-check"]
    return {k: task["heldout"][k] for k in ("auroc", "balanced_accuracy")}


def _heldout_file(run: Path, source: str) -> Path:
    """The held-out rows the run wrote for ``source``, named as the run named its set.

    ``PROVENANCE.json`` keeps the run's set specs (``config.sets``) in the order of
    ``train_default_judge.SOURCES``; ``judgelab.tuning.source_names`` gives the name the run gave each
    spec, and the file is that name's ``heldout_file_name``. Reading it from the run means a changed
    set file cannot leave a stale copy here.
    """
    from train_default_judge import SOURCES as TRAINING_SOURCES

    from judgelab.tuning import heldout_file_name, source_names

    specs = json.loads((run / "PROVENANCE.json").read_text())["config"]["sets"]
    index = [name for name, _spec, _rows in TRAINING_SOURCES].index(source)
    kind = TRAINING_SOURCES[index][1].split("{data}")[0]
    if index >= len(specs) or not specs[index].startswith(kind):
        found = specs[index] if index < len(specs) else f"absent ({len(specs)} sets)"
        sys.exit(f"{run / 'PROVENANCE.json'}: set {index} is {found!r}, not a {kind!r} set: the run was made by "
                 "another version of train_default_judge.py; rerun the fold into a new --runs folder.")
    path = run / "heldout" / heldout_file_name(source_names(specs)[index])
    if not path.exists():
        found = sorted(p.name for p in (run / "heldout").glob("*.jsonl"))
        sys.exit(f"{path} is missing: the run wrote {', '.join(found) or 'no held-out files'}; "
                 "rerun the fold into a new --runs folder.")
    return path


def evaluation_rows(heldout: Path, dest: Path, limit: int, seed: int = 2026) -> int:
    """Up to ``limit`` rows of ``heldout``, whole resampling units (``LabelledRow.unit``) in a seeded order."""
    from judgelab.calibration.data import LabelledRow

    if dest.exists():
        return sum(1 for line in dest.read_text(encoding="utf-8").splitlines() if line.strip())
    groups: dict[str, list[str]] = {}
    for line in heldout.read_text(encoding="utf-8").splitlines():
        if line.strip():
            groups.setdefault(LabelledRow.model_validate_json(line).unit, []).append(line)
    keys = sorted(groups)
    random.Random(seed).shuffle(keys)
    picked: list[str] = []
    for key in keys:
        if len(picked) + len(groups[key]) > limit:
            continue
        picked.extend(groups[key])
    dest.write_text("\n".join(picked) + "\n", encoding="utf-8")
    return len(picked)


def _cell(f: dict) -> str:
    return f"{f['estimate']:.3f} [{f['low']:.2f}, {f['high']:.2f}]"


def _diff(f: dict) -> str:
    return f"{f['estimate']:+.3f} [{f['low']:+.3f}, {f['high']:+.3f}]"


def measure(source: str, runs: Path, args: argparse.Namespace) -> dict:
    """Train without ``source``, calibrate base and tuned on its rows, compare; the figures."""
    out = runs / source
    log = runs / f"{source}.log"
    leave = [a for s in (source, *DERIVED.get(source, ())) for a in ("--leave-out", s)]
    _run([sys.executable, "benchmarks/train_default_judge.py", "--out", str(out), "--no-progress",
          "--scale", str(args.scale), "--heldout-max", str(args.heldout_max), "--autocast", args.autocast, *leave,
          *(["--adapt-top", str(args.adapt_top)] if args.adapt_top else []), "--cache", args.cache,
          "--epochs", str(args.epochs), "--seed", str(args.seed),
          *[a for name, n in args.rows.items() for a in (f"--{name.replace('_', '-')}", str(n))]], log)
    rows = runs / f"eval-{source}.jsonl"
    n = evaluation_rows(_heldout_file(out, source), rows, args.limit)
    cal = {}
    other = args.compare_with
    if other is not None and (other / f"cal-{source}-base").is_dir() and not (runs / f"cal-{source}-base").exists():
        shutil.copytree(other / f"cal-{source}-base", runs / f"cal-{source}-base")
    for label, model in (("base", "gemma-3-270m"), ("tuned", str(out / "judge.toml"))):
        cal[label] = runs / f"cal-{source}-{label}"
        _run(["judgelab", "calibrate", "--model", model, "--set", str(rows), "--out", str(cal[label]),
              "--threads", str(args.threads), "--no-plots", "--no-progress"], log)
    paired = _compare(cal["base"], cal["tuned"], runs / f"compare-{source}.json")
    versus = None
    if other is not None:
        d = _compare(other / f"cal-{source}-tuned", cal["tuned"], runs / f"versus-{source}.json")
        versus = {"runs": str(other), **_differences(d), "mcnemar": d["mcnemar"]}
    return {"source": source, "rows": n, "scale": args.scale, "seed": args.seed, "autocast": args.autocast,
            "adapt_top": args.adapt_top, "cache": args.cache, "epochs": args.epochs,
            **({"optional_rows": dict(args.rows)} if args.rows else {}), "base": _heldout_figures(cal["base"]),
            "tuned": _heldout_figures(cal["tuned"]),
            "paired": _differences(paired),
            "groups": paired["resampling"]["groups"], **({"versus": versus} if versus else {})}


def training_figures(run: Path) -> dict | None:
    """Steps, tokens, seconds and tokens/s of a fold's training run, from its ``PROVENANCE.json``."""
    path = run / "PROVENANCE.json"
    if not path.is_file():
        return None
    prov = json.loads(path.read_text())
    return {k: prov.get(k) for k in ("steps", "tokens", "train_seconds", "tokens_per_second", "machine", "commit")}


def _differences(compared: dict) -> dict:
    """The paired AUROC and balanced-accuracy differences of one ``judgelab compare --json`` answer."""
    return {k: compared["difference_b_minus_a"][k] for k in ("auroc", "balanced_accuracy")}


def _compare(a: Path, b: Path, dest: Path) -> dict:
    """``judgelab compare A B --task fact-check --json`` (B minus A, paired by group), kept in ``dest``."""
    cmp = subprocess.run(["judgelab", "compare", str(a), str(b), "--task", "fact-check", "--json"], check=True,
                         capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    dest.write_text(cmp.stdout)
    return json.loads(cmp.stdout)


HEADER = ["| left out | rows (groups) | base AUROC | tuned AUROC | base BA | tuned BA | paired dAUROC | paired dBA |",
          "|---|---|---|---|---|---|---|---|"]


VERSUS_HEADER = (" versus OTHER dAUROC | versus OTHER dBA |", "---|---|")


def header(versus: bool) -> list[str]:
    """The table's two header lines (two more columns with ``--compare-with``)."""
    return [HEADER[0] + VERSUS_HEADER[0], HEADER[1] + VERSUS_HEADER[1]] if versus else list(HEADER)


def table_row(r: dict) -> str:
    """One markdown row of the table (with the paired difference to OTHER's judge where measured)."""
    versus = (f" {_diff(r['versus']['auroc'])} | {_diff(r['versus']['balanced_accuracy'])} |"
              if "versus" in r else "")
    return (f"| {r['source']} | {r['rows']} ({r['groups']}) | {_cell(r['base']['auroc'])} | "
            f"**{_cell(r['tuned']['auroc'])}** | {_cell(r['base']['balanced_accuracy'])} | "
            f"{_cell(r['tuned']['balanced_accuracy'])} | {_diff(r['paired']['auroc'])} | "
            f"{_diff(r['paired']['balanced_accuracy'])} |" + versus)


def _optional_rows(p: argparse.ArgumentParser, pairs: list[str]) -> dict[str, int]:
    """``NAME=N`` pairs of ``--rows`` as {name: rows}, each NAME an optional source of train_default_judge.py."""
    from train_default_judge import OPTIONAL_SOURCES

    names = [name for name, *_ in OPTIONAL_SOURCES]
    rows: dict[str, int] = {}
    for pair in pairs:
        name, sep, n = pair.partition("=")
        if not sep or not n.isdigit():
            p.error(f"--rows {pair!r}: write NAME=N, N a whole number of rows (e.g. num_fever=120)")
        if name not in names:
            p.error(f"--rows {pair!r}: {name!r} is not an optional source of train_default_judge.py; "
                    f"choose from {', '.join(names)}")
        rows[name] = int(n)
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=Path, default=Path("runs/loso"))
    p.add_argument("--sources", default=",".join(SOURCES), help="comma-separated, of " + ", ".join(SOURCES))
    p.add_argument("--limit", type=int, default=200, help="rows of the left-out source measured (whole groups)")
    p.add_argument("--scale", type=float, default=1.0, help="train_default_judge.py --scale (rows per source)")
    p.add_argument("--heldout-max", type=int, default=4, help="train_default_judge.py --heldout-max (its report)")
    p.add_argument("--autocast", choices=("none", "bf16"), default="none", help="train_default_judge.py --autocast")
    p.add_argument("--adapt-top", type=int, metavar="K", help="train_default_judge.py --adapt-top (default: top half)")
    p.add_argument("--cache", choices=("none", "memory"), default="none", help="train_default_judge.py --cache")
    p.add_argument("--epochs", type=int, default=1, help="train_default_judge.py --epochs")
    p.add_argument("--seed", type=int, default=0,
                   help="train_default_judge.py --seed; run a second seed into another --runs to see training noise")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--compare-with", type=Path, metavar="OTHER",
                   help="another --runs folder, same sources and rows: pair each fold's tuned judge with OTHER's")
    p.add_argument("--rows", action="append", default=[], metavar="NAME=N",
                   help="train_default_judge.py --NAME N for one of its optional sources (hard negatives: num_fever, "
                        "swap_factcg, ...; sentence rows: sent_...), before --scale; repeatable. A generated source "
                        "whose parent is left out is not read. Use a new --runs folder: a fold that is done is not rerun")
    args = p.parse_args()
    args.rows = _optional_rows(p, args.rows)
    args.runs.mkdir(parents=True, exist_ok=True)
    sources = args.sources.split(",")
    for source in sources:
        if source not in SOURCES:
            p.error(f"unknown source {source!r}; choose from {', '.join(SOURCES)}")
    done_path = args.runs / "table.json"
    done = {r["source"]: r for r in json.loads(done_path.read_text())} if done_path.exists() else {}
    print("\n".join(header(args.compare_with is not None)), flush=True)
    for source in sources:
        if source not in done:
            done[source] = measure(source, args.runs, args)
        if "training" not in done[source]:  # folds measured before the field existed
            done[source]["training"] = training_figures(args.runs / source)
        done_path.write_text(json.dumps(list(done.values()), indent=1))
        print(table_row(done[source]), flush=True)
    lines = header(any("versus" in r for r in done.values())) + [table_row(r) for r in done.values()]
    (args.runs / "table.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
