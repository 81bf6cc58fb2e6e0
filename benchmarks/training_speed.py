"""Training speed of ``judgelab tune``'s settings, measured in one run on the same rows (docs/tuning.md).

    PYTHONPATH=src python benchmarks/training_speed.py [--rows 48 --epochs 2 --batch 8]

Each setting trains the shipped recipe (``train_default_judge.py``'s mix of sources, chunking and
prompt lengths; the same ``--rows`` rows, drawn by the same seed) for ``--epochs`` epochs, so every
setting sees the same prompts in the same order. The settings (``--settings``, comma-separated):

- ``float32``: today's default (LoRA on the top half of the layers, float32);
- ``bf16``: ``--autocast bf16`` (LoRA weights, gradients, optimizer state and the label head stay float32);
- ``top-K``: ``--adapt-top K``, LoRA on the top K layers only (no backward pass below them);
- ``cache``, ``cache-top-K``: ``--cache memory`` (the frozen layers run once per prompt; later epochs
  read their output from memory); ``+bf16`` after any of these adds bf16 autocast.

Each setting's tokens/s is the training tokens over the time of the optimizer steps (loading,
rendering and writing the adapter are not timed), for all epochs and per epoch (the cache pays from
the second epoch on), with its ratio to ``float32``'s, and each run's last-epoch mean loss. The
results file, ``benchmarks/results/tuning/training-speed-<cpu>.json`` (``--results``; through
``results_file.write_results``: this script's command, the commit and whether the tree was dirty, the
CPU model and its instruction-set flags, llama.cpp's system info, the core count and the library
versions; ``--data`` shown as ``DATA``, ``--runs`` as ``RUNS``), also records the CPU's bf16 flags, the
load average before and after, the autogroup setting and torch's threads: figures from a busy machine
(load average above the core count) are not valid.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import machine, script_argv, write_results  # noqa: E402

DEFAULT_SETTINGS = "float32,bf16,top-6,top-6+bf16,cache,cache-top-6,cache-top-6+bf16"


def overrides(setting: str) -> dict:
    """The ``TuneConfig`` fields of a setting name (``cache-top-6+bf16`` and the like)."""
    name, _, extra = setting.partition("+")
    if name == "bf16":
        name, extra = "float32", extra or "bf16"
    fields: dict = {"autocast": "bf16" if extra == "bf16" else "none"}
    if extra not in ("", "bf16"):
        raise SystemExit(f"training_speed.py: unknown suffix +{extra} in {setting!r}; only +bf16 is known")
    if name.startswith("cache"):
        fields["cache"] = "memory"
        name = name[len("cache"):].lstrip("-") or "float32"
    if name.startswith("top-") and name[4:].isdigit():
        fields["layers"] = name
    elif name != "float32":
        raise SystemExit(f"training_speed.py: unknown setting {setting!r}; use float32, bf16, top-K, cache, "
                         "cache-top-K, each with an optional +bf16")
    return fields


def host_setup() -> dict:
    """What the figures depend on beyond what write_results records (the CPU model, its flags, the cores):
    the CPU's bf16 instructions as judgelab.tuning reads them, the scheduler's autogroups, torch's threads."""
    from judgelab.tuning import cpu_flags

    flags = cpu_flags() or frozenset()
    autogroup = Path("/proc/sys/kernel/sched_autogroup_enabled")
    import torch

    return {"bf16_flags": sorted(flags & {"avx512_bf16", "amx_bf16", "amx_tile", "avx512f"}),
            "autogroup": autogroup.read_text().strip() if autogroup.exists() else None,
            "torch_threads": torch.get_num_threads()}


def cpu_slug() -> str:
    """The CPU model as a file-name part (``amd-epyc``): the default results file's ``<cpu>``."""
    return slug(machine()["cpu"])


def slug(cpu: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", cpu.lower()).strip("-")[:60] or "unknown-cpu"


def measure(setting: str, base, runs: Path) -> dict:
    """Train one setting from scratch; its tokens/s over all steps and per epoch, and its losses."""
    from judgelab.tuning import tune

    out = runs / setting.replace("+", "_")
    config = dataclasses.replace(base, out=str(out), **overrides(setting))
    result = tune(config)
    per_epoch = result.steps // config.epochs
    epochs = []
    for e in range(config.epochs):
        steps = [t for t in result.timings if e * per_epoch < t[0] <= (e + 1) * per_epoch]
        tokens, seconds = sum(t[1] for t in steps), sum(t[2] for t in steps)
        epochs.append({"epoch": e + 1, "steps": len(steps), "tokens": tokens, "seconds": round(seconds, 2),
                       "tokens_per_s": round(tokens / seconds, 1) if seconds else None})
    losses = json.loads((out / "losses.json").read_text())
    last = [loss for step, loss in losses if step > (config.epochs - 1) * per_epoch]
    return {"setting": setting, "fields": overrides(setting), "steps": result.steps, "tokens": result.tokens,
            "seconds": round(result.seconds, 2), "tokens_per_s": round(result.tokens / result.seconds, 1),
            "epochs": epochs, "last_epoch_mean_loss": round(sum(last) / len(last), 4) if last else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--settings", default=DEFAULT_SETTINGS, help=f"comma-separated (default {DEFAULT_SETTINGS})")
    p.add_argument("--rows", type=int, default=48, help="training rows (default 48: 6 steps of 8 per epoch)")
    p.add_argument("--epochs", type=int, default=2, help="epochs over the same rows (default 2)")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=Path, default=Path("runs/training-speed"), help="the runs' folders (rewritten)")
    p.add_argument("--results", type=Path, help="results file (default benchmarks/results/tuning/"
                   "training-speed-<cpu>.json)")
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the labelled sets folder")
    args = p.parse_args(argv)
    settings = args.settings.split(",")
    for s in settings:
        overrides(s)  # unknown names stop here, before anything is loaded
    import logging
    import shutil

    import train_default_judge

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    recipe = train_default_judge.parser().parse_args(["--data", str(args.data), "--batch", str(args.batch),
                                                      "--threads", str(args.threads), "--no-progress"])
    base = dataclasses.replace(train_default_judge.build_config(recipe), rows=args.rows, epochs=args.epochs,
                               max_steps=None, heldout_max=0, checkpoint_every=10**6)
    load_before = os.getloadavg()
    started = time.time()
    results = []
    for setting in settings:
        shutil.rmtree(args.runs / setting.replace("+", "_"), ignore_errors=True)
        results.append(measure(setting, base, args.runs))
        print(json.dumps(results[-1]), flush=True)
    setup = host_setup()  # after the runs: torch's threads as tune set them
    reference = next((r for r in results if r["setting"] == "float32"), None)
    for r in results:
        r["ratio_to_float32"] = round(r["tokens_per_s"] / reference["tokens_per_s"], 3) if reference else None
    record = {"what": "judgelab tune tokens/s per setting, one run, the same rows and seed (training_speed.py)",
              **setup, "load_average_before": load_before,
              "load_average_after": os.getloadavg(), "wall_seconds": round(time.time() - started, 1),
              "rows": args.rows, "epochs": args.epochs, "batch": args.batch, "threads": args.threads,
              "settings": results}
    path = args.results or REPO / "benchmarks" / "results" / "tuning" / f"training-speed-{cpu_slug()}.json"
    write_results(path, record, scrub={args.data.absolute(): "DATA", args.runs.absolute(): "RUNS"},
                  argv=script_argv(__file__, argv))
    for r in results:
        print(f"{r['setting']:>20}: {r['tokens_per_s']:8.1f} tokens/s  x{r['ratio_to_float32']}  "
              f"(per epoch: {', '.join(str(e['tokens_per_s']) for e in r['epochs'])})")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
