"""Train the adapter of the shipped default judge ``gemma-3-270m-judge`` (one command).

    PYTHONPATH=src python benchmarks/train_default_judge.py --out /work/tune-runs/default

It tunes LoRA weights on the label reading of Gemma 3 270M (the embedded
base, on the transformers backend) with the fact-checking evaluator's own
prompt, from the labelled sets in ``../shared/data`` (``--data``), one
option per source giving its training rows (``SOURCES`` below; balanced per
label): MNLI and FEVER-NLI (DocNLI binary), SNLI, FIB, FactCG, BEGIN,
SummEdits (its scitldr domain only), and deletion pairs made from FIB and
SummEdits (``d2c:``); hard negatives (``num:``, ``swap:``, ``partial:``,
``GENERATED_SOURCES``) and sentence rows (``sent:``, ``SENTENCE_SOURCES``) are options, off by default.
WiCE, HaluEval QA and FaithBench are held out whole
(FaithBench's licence allows evaluation only). Every training source needs
an entry in ``LICENCES`` that says a shipped adapter may train on it
(``../shared/data/PROVENANCE.md``, "Licences"); the script refuses any other. FIB
and FactCG count as research data: their documents are news articles, trained on
and never redistributed. ``--leave-out SOURCE`` holds one more out whole
(``leave_one_source_out.py`` runs one per source); ``--scale`` shrinks every
source's rows alike (a quicker run of the same mix).

Documents are read as they are served: chunks of ``--chunk-tokens`` 400
(written into the tuned spec), a row's probability the best chunk's
(``--long-rows chunk``); prompts up to ``--max-tokens`` 640. No row that
shares a row, document, claim, long sentence or near-duplicate document
with the quick start's set (``--exclude calibration/starter.jsonl``) is
trained on, and deletion pairs are built only from rows that survive that
exclusion. Every source also keeps 10% of its units (a document's rows,
``meta.pair`` edits, a FactCG claim and its twin, a deletion pair with its
parent) out of training, and training rows that share text with a held-out
row are dropped; ``OUT/heldout/*.jsonl`` holds them, for
``judgelab calibrate --set``. The run is seeded and resumable: the same
command continues from the last checkpoint (kill it any time). It writes
``OUT/judge.toml`` (the tuned spec), ``OUT/peft/``, ``OUT/adapter.gguf``,
``OUT/report.md``, ``OUT/loss.png`` and ``OUT/PROVENANCE.json``.

Budget of the shipped run (``--scale 4``, the default: each source's rows in
``SOURCES`` four times over, where a source has that many): 1,517,512 training
tokens (7,520 rows, one epoch, 940 steps of 8 rows at lr 6e-4), 6,214 s of
training (244 tokens/s, float32, two torch threads) on a 2-core AMD EPYC (AVX2)
with nothing else heavy running (autogroups off: docs/measurements.md), in two
sessions (the run resumes from its checkpoint). ``--scale 2`` is the previous
shipped run (run clean1, the clean pool's first adapter), ``--scale 1`` the
size of the full-size leave-one-source-out folds. Float32
is the default: the one bf16 fold tried scored worse (docs/tuning.md, "Training
speed", for bf16 with a float32 label head and the other speed settings). ``--ship models`` then copies the adapter and
spec into ``models/`` (see docs/tuning.md).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


#: (option name, set spec under --data, default training rows; 0 = held out whole, never trained on)
SOURCES = (
    ("mnli", "mnli:{data}/mnli", 400),
    ("fever", "fever-nli:{data}/fever_nli", 400),
    ("snli", "snli:{data}/snli/esnli_dev.jsonl", 150),
    ("fib", "fib:{data}/fib", 240),
    ("factcg", "factcg:{data}/factcg/CG2C_doc.json", 300),
    ("begin", "begin:{data}/begin", 220),
    ("summedits", "summedits:{data}/summedits/summedits_scitldr.json", 150),
    ("d2c_fib", "d2c:fib:{data}/fib", 90),
    ("d2c_summedits", "d2c:summedits:{data}/summedits/summedits_scitldr.json", 90),
    ("wice", "wice:{data}/wice/dev.jsonl", 0),
    ("halueval", "halueval-qa:{data}/halueval/qa_one-turn.jsonl", 0),
    ("faithbench", "faithbench:{data}/faithbench/FaithBench.csv", 0),
)

#: Hard negatives made from other sources' rows (docs/generators.md): (option name, set spec, default rows, the
#: sources they come from, first the one whose licence they carry). Unlike SOURCES, 0 rows leaves a source out of
#: the run altogether (it is not held out whole: its rows share documents with their parents'), and it leaves
#: with any of its parents (``--leave-out fever`` drops ``num_fever``). All 0 by default: the shipped recipe is
#: unchanged until a measurement says otherwise.
GENERATED_SOURCES = (
    ("num_fever", "num:fever-nli:{data}/fever_nli", 0, ("fever",)),
    ("num_factcg", "num:factcg:{data}/factcg/CG2C_doc.json", 0, ("factcg",)),
    ("num_fib", "num:fib:{data}/fib", 0, ("fib",)),
    ("swap_fever", "swap:fever-nli:{data}/fever_nli", 0, ("fever",)),
    ("swap_factcg", "swap:factcg:{data}/factcg/CG2C_doc.json", 0, ("factcg",)),
    ("swap_begin", "swap:begin:{data}/begin", 0, ("begin",)),
    ("partial_fever", "partial:fever-nli:{data}/fever_nli", 0, ("fever",)),
    ("partial_factcg", "partial:factcg:{data}/factcg/CG2C_doc.json", 0, ("factcg",)),
    ("partial_begin", "partial:begin:{data}/begin", 0, ("begin",)),
)
#: Optional sources made from other sources' rows: (option name, set spec, default rows, the sources they come
#: from, first the one whose licence they carry). Sentence rows (``sent:``): one claim sentence against the
#: evidence window ``fact-checking-sentences`` gives it (docs/tuning.md). Unlike SOURCES, 0 rows leaves a source
#: out of the run altogether (it is not held out whole: its rows share text with their parents'), and it
#: leaves with any of its parents (``--leave-out fib`` drops ``sent_fib`` and ``sent_d2c_fib``). All 0 by
#: default: the shipped recipe is unchanged until a measurement says otherwise.
SENTENCE_SOURCES = (
    ("sent_fever", "sent:fever-nli:{data}/fever_nli", 0, ("fever",)),
    ("sent_fib", "sent:fib:{data}/fib", 0, ("fib",)),
    ("sent_factcg", "sent:factcg:{data}/factcg/CG2C_doc.json", 0, ("factcg",)),
    ("sent_d2c_fib", "sent:d2c:fib:{data}/fib", 0, ("d2c_fib", "fib")),
    ("sent_d2c_summedits", "sent:d2c:summedits:{data}/summedits/summedits_scitldr.json", 0,
     ("d2c_summedits", "summedits")),
)
#: Relevancy rows (issue 62), rendered with the relevancy evaluator's prompt: SQuAD v1.1 train questions, each
#: with its answer sentence and replies that do not answer it (``judgelab.calibration.import_squad_relevancy``),
#: from ``--squad-file`` (``benchmarks/squad_from_explorer.py`` writes it). 0 by default: the shipped recipe is
#: unchanged until a measurement says otherwise.
#: ``squad_same`` is the same file's hardest kind alone (``import_squad_same_paragraph``: the answer sentence
#: against another sentence of its paragraph); use one of the two, not both: their rows share paragraphs, and
#: each source draws its own held-out units.
RELEVANCY_SOURCES = (
    ("squad", "squad-relevancy:{squad}", 0, ()),
    ("squad_same", "squad-same-paragraph:{squad}", 0, ()),
)
#: Optional sources: read only when given rows (``used_sources``).
OPTIONAL_SOURCES = (*GENERATED_SOURCES, *SENTENCE_SOURCES, *RELEVANCY_SOURCES)


_FIB = "FIB annotations CC-BY-4.0; BBC (XSum) and CNN/Daily Mail articles, trained on as research data, never redistributed"
_SCITLDR = ("SummEdits annotations Apache-2.0; domain scitldr only: SciTLDR abstracts (Apache-2.0 in its catalogue entry). "
            "Domains samsum (SAMSum, CC BY-NC-ND 4.0), podcast, news and ectsum are left out (origin licence not commercial "
            "or not verified)")

#: Per source: the licence of its text and whether a shipped adapter may train on it
#: (``../shared/data/PROVENANCE.md``, "Licences"; when in doubt a source is left out). The script refuses to train
#: on a source that has no entry here or whose entry says no.
LICENCES: dict[str, tuple[str, bool]] = {
    "mnli": ("MultiNLI text OANC / CC-BY-SA-3.0; DocNLI binary files BSD-3-Clause", True),
    "fever": ("FEVER evidence from Wikipedia CC-BY-SA-3.0; DocNLI binary files BSD-3-Clause", True),
    "snli": ("SNLI sentences CC-BY-SA-4.0; e-SNLI MIT", True),
    "fib": (_FIB, True),
    "factcg": ("FactCG CG2C: MIT repository; its documents are news and web articles, trained on as research data, "
               "never redistributed", True),
    "begin": ("BEGIN: responses CC-BY-4.0 (CMU-DoG, WoW), CDLA-Sharing-1.0 (TopicalChat); knowledge Wikipedia "
              "CC-BY-SA-3.0, TopicalChat's also Washington Post articles (research data, never redistributed)", True),
    "summedits": (_SCITLDR, True),
    "d2c_fib": (_FIB + "; deletion pairs made by judgelab", True),
    "d2c_summedits": (_SCITLDR + "; deletion pairs made by judgelab", True),
    "wice": ("Wikipedia CC-BY-SA and cited web pages: evaluation only", False),
    "halueval": ("MIT; knowledge from HotpotQA / Wikipedia: kept for evaluation", False),
    "faithbench": ("CC-BY-NC-SA-4.0: evaluation only", False),
    "squad": ("SQuAD v1.1 train: CC-BY-SA-4.0 (Wikipedia paragraphs; rajpurkar/SQuAD-explorer @ 0b3c8e8); "
              "relevancy replies made by judgelab", True),
}
LICENCES["squad_same"] = LICENCES["squad"]
# a generated source's text is its first parent's, with one claim edited (or joined to another row's claim)
LICENCES.update({name: (LICENCES[parents[0]][0] + "; hard-negative pairs made by judgelab", LICENCES[parents[0]][1])
                 for name, _, _, parents in GENERATED_SOURCES})
# a sentence source's text is its first parent's, cut into sentences and windows
LICENCES.update({name: (LICENCES[parents[0]][0] + "; sentence rows made by judgelab", LICENCES[parents[0]][1])
                 for name, _, _, parents in SENTENCE_SOURCES})


def used_sources(args: argparse.Namespace) -> list[tuple[str, str, int]]:
    """(option name, set spec, training rows) of every source the run reads, in order.

    Every source of SOURCES (0 rows: held out whole), then the optional sources that have rows and none of
    whose parents is left out.
    """
    def rows(name: str) -> int:
        return 0 if name in args.leave_out else round(getattr(args, name) * args.scale)

    used = [(name, spec, rows(name)) for name, spec, _ in SOURCES]
    used += [(name, spec, rows(name)) for name, spec, _, parents in OPTIONAL_SOURCES
             if rows(name) > 0 and not set(parents) & set(args.leave_out)]
    return used


def check_licences(args: argparse.Namespace) -> None:
    """Refuse a training source (rows > 0) without a licence entry, or whose licence does not allow shipping."""
    for name, _spec, rows in used_sources(args):
        if rows == 0:
            continue
        licence = LICENCES.get(name)
        if licence is None or not licence[1]:
            why = "has no licence entry in LICENCES" if licence is None else f"may not be trained on ({licence[0]})"
            raise SystemExit(f"train_default_judge.py: source {name!r} {why}: a shipped adapter trains only on "
                             f"sources whose licence lets it (PROVENANCE.md, \"Licences\"). Pass --{name.replace('_', '-')} 0, "
                             "or add an entry to LICENCES after checking ../shared/data/PROVENANCE.md.")


def sets_and_weights(data: Path, args: argparse.Namespace) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The training sources and their shares of the rows (0 = held out whole); ``--leave-out`` zeroes one."""
    sets, weights = [], []
    for _name, spec, rows in used_sources(args):
        sets.append(spec.format(data=data, squad=args.squad_file))
        weights.append(float(rows))
    return tuple(sets), tuple(weights)


def parser() -> argparse.ArgumentParser:
    """The command line of this script (``heldout_eval_sets.py`` reads its defaults)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the labelled sets folder")
    p.add_argument("--out", default="runs/tune/default", help="output folder (reruns resume)")
    for name, spec, rows in SOURCES:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, default=rows,
                       help=f"training rows from {spec.split(':')[0]} (default {rows}; 0 = held out whole)")
    for name, spec, rows, _parents in OPTIONAL_SOURCES:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, default=rows,
                       help=f"training rows from {spec.rsplit(':', 1)[0].replace('{data}', '')} (default {rows}; "
                       "0 = not read)")
    p.add_argument("--squad-file", type=Path, default=REPO / "runs" / "squad" / "train-v1.1.json",
                   help="SQuAD v1.1 train JSON, read when --squad has rows (benchmarks/squad_from_explorer.py writes it)")
    p.add_argument("--leave-out", action="append", default=[], metavar="SOURCE",
                   help="hold this source out whole (a leave-one-source-out run); repeatable")
    p.add_argument("--scale", type=float, default=4.0,
                   help="multiply every source's training rows (4, the default: the shipped run; 2: the previous "
                        "shipped run; 1: the full-size leave_one_source_out.py folds; 0.25: a quarter-size run)")
    p.add_argument("--exclude", type=Path, default=REPO / "calibration" / "starter.jsonl",
                   help="documents of this set are never trained on (default: the quick start's set)")
    p.add_argument("--max-tokens", type=int, default=640)
    p.add_argument("--chunk-tokens", type=int, default=400,
                   help="document chunk length for training and for the tuned spec (default 400)")
    p.add_argument("--autocast", choices=("none", "bf16"), default="none")
    p.add_argument("--adapt-top", type=int, metavar="K", help="LoRA on the top K layers only (default: the top half)")
    p.add_argument("--cache", choices=("none", "memory"), default="none",
                   help="keep the frozen lower layers' output between epochs (judgelab tune --cache)")
    p.add_argument("--cache-mb", type=int, default=2048, help="bound of --cache memory in MiB")
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--rank", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--split-seed", type=int, help="seed of the held-out split alone (default: --seed); a second "
                   "--seed with --split-seed 0 holds out the shipped run's units, so the two pair")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-steps", type=int, help="stop the schedule after this many steps (a quick trial)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--heldout-max", type=int, default=16, help="held-out rows per source scored in the report")
    p.add_argument("--judge-relevancy-prompt", action="store_true",
                   help="render relevancy rows (--squad) with the shipped judge's own relevancy prompt ([tasks.relevancy] "
                   "of models/gemma-3-270m-judge.toml) instead of Spring AI's; the tuned spec carries it")
    p.add_argument("--init-adapter", type=Path, metavar="PEFT_DIR",
                   help="continue training this adapter (e.g. models/gemma-3-270m-judge/peft, the shipped one) "
                   "instead of starting a fresh one (judgelab tune --init-adapter)")
    p.add_argument("--name", default="gemma-3-270m-judge")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--ship", type=Path, metavar="MODELS_DIR",
                   help="when finished, copy the adapter and spec into MODELS_DIR (e.g. models)")
    return p


def base_model(args: argparse.Namespace) -> str:
    """The base model to tune: ``gemma-3-270m``, or with ``--judge-relevancy-prompt`` its spec plus the shipped
    judge's ``[tasks.relevancy]``, written beside the run (``OUT.base.toml``) so that the same command resumes.

    Training renders each task's rows with the evaluator the base's spec gets, and the tuned spec copies the
    base's fields: so the relevancy rows are rendered with the prompt the judge will be asked, and it ships with it.
    """
    if not args.judge_relevancy_prompt:
        return "gemma-3-270m"
    import tomllib

    judge = tomllib.loads((REPO / "models" / "gemma-3-270m-judge.toml").read_text(encoding="utf-8"))
    template = judge["tasks"]["relevancy"]["template"]
    base = (REPO / "models" / "gemma-3-270m.toml").read_text(encoding="utf-8")
    quoted = '"""' + template.replace("\\", "\\\\").replace('"""', '\\"""') + '"""'
    path = Path(f"{args.out}.base.toml").resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (base.rstrip("\n") + "\n\n# Added by train_default_judge.py --judge-relevancy-prompt: the shipped judge's own "
            "relevancy prompt.\n[tasks.relevancy]\ntemplate = " + quoted + "\n")
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    if tomllib.loads(text)["tasks"]["relevancy"]["template"] != template:
        raise SystemExit(f"train_default_judge.py: {path} does not read back the judge's relevancy prompt")
    return str(path)


def build_config(args: argparse.Namespace):
    """The ``TuneConfig`` of a run with these arguments."""
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.tuning import TuneConfig

    sets, weights = sets_and_weights(args.data, args)
    return TuneConfig(
        sets=sets, weights=weights, rows=int(sum(weights)), out=args.out, model=base_model(args),
        evaluator="fact-checking", heldout=0.1, heldout_max=args.heldout_max, max_tokens=args.max_tokens,
        long_rows="chunk", chunk_tokens=args.chunk_tokens, autocast=args.autocast, max_steps=args.max_steps,
        exclude=(str(args.exclude),) if args.exclude else (),
        licences=tuple(LICENCES.get(name, ("no entry", False))[0] for name, _, _ in used_sources(args)),
        rank=args.rank, alpha=2.0 * args.rank, epochs=args.epochs, lr=args.lr, batch=args.batch, warmup=0.1,
        seed=args.seed, split_seed=args.split_seed, device=args.device, threads=args.threads, checkpoint_every=10,
        progress=not args.no_progress, name=args.name,
        layers=f"top-{args.adapt_top}" if args.adapt_top else "top-half", cache=args.cache, cache_mb=args.cache_mb,
        init_adapter=str(args.init_adapter) if args.init_adapter else None,
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.squad and args.squad_same:
        raise SystemExit("train_default_judge.py: --squad and --squad-same read the same SQuAD paragraphs and draw "
                         "their held-out units apart, so one's training rows would share paragraphs with the other's "
                         "held-out rows. Pass one of them.")
    check_licences(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = build_config(args)
    from judgelab.tuning import tune

    result = tune(config)
    print(f"finished={result.finished} steps={result.steps} tokens={result.tokens} "
          f"train_seconds={result.seconds:.0f} spec={result.spec_path}")
    if args.ship and result.finished:
        from judgelab.tuning import ship_adapter

        print(f"shipped: {ship_adapter(result.out, args.ship)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
