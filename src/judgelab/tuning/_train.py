"""``tune``: LoRA on a judge's label reading, resumable, seeded, with a held-out report."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
import numpy.typing as npt

from judgelab.engine import JudgeModel, load_model
from judgelab.errors import BackendUnavailableError, DataError, JudgelabError
from judgelab.tuning._checkpoint import RunState, load_checkpoint, save_checkpoint
from judgelab.tuning._config import TuneConfig
from judgelab.tuning._cpu import NATIVE_BF16_FLAGS, cpu_flags, native_bf16
from judgelab.tuning._data import Example, SourceCounts, balance_examples, fits, load_sources, render_examples, split_sources
from judgelab.tuning._evaluate import HeldoutEvaluation, HeldoutScores, evaluate_heldout, pick_heldout
from judgelab.tuning._hidden_cache import HiddenCache, SplitForward, check_split
from judgelab.tuning._lora import LabelReader, attach_lora, import_peft, load_initial_adapter

if TYPE_CHECKING:
    import torch
    from tqdm import tqdm
    from transformers import PreTrainedModel

    from judgelab.calibration import LabelledRow

__all__ = ["TuneResult", "tune"]

log = logging.getLogger(__name__)

# Padded tokens per forward pass, and the most padding a micro-batch may carry.
_MICRO_TOKENS = {"cpu": 2048, "cuda": 16384}
_MAX_PADDING = 0.25


@dataclass(frozen=True)
class TuneResult:
    """What a tuning run wrote and measured.

    Attributes
    ----------
    out
        The output folder.
    spec_path
        The tuned model spec (``judge.toml``); ``None`` while unfinished.
    finished
        False when the run stopped early (``stop_after``); rerun to resume.
    steps, tokens, seconds
        Optimizer steps done, training tokens seen, training wall time.
    counts
        Per source: rows read, trained, held out, skipped as too long.
    evaluations
        Held-out metrics of the base model and after each epoch.
    timings
        ``(step, tokens, seconds)`` of every step (of a resumed run: those
        timed since checkpoints kept them).
    """

    out: Path
    spec_path: Path | None
    finished: bool
    steps: int
    tokens: int
    seconds: float
    counts: dict[str, SourceCounts] = field(default_factory=dict)
    evaluations: list[HeldoutEvaluation] = field(default_factory=list)
    timings: list[tuple[int, int, float]] = field(default_factory=list)


def _load_base(config: TuneConfig) -> Any:
    options: dict[str, object] = {"device": config.device, "dtype": config.dtype}
    if config.threads:
        options["n_threads"] = config.threads
    try:
        model = load_model(config.model, backend="transformers", **options)
    except BackendUnavailableError as exc:
        raise BackendUnavailableError(
            f"Cannot tune {config.model!r}: tuning runs on the transformers backend. {exc}",
            backend="transformers",
        ) from exc
    if config.chunk_tokens is not None:  # render training rows in chunks of the size the tuned spec serves
        model.spec = model.spec.model_copy(update={"chunk_tokens": config.chunk_tokens})
    return model


def _prepare(model: JudgeModel, config: TuneConfig) -> tuple[
        list[Example], dict[str, list[LabelledRow]], dict[str, SourceCounts]]:
    """Training examples, held-out rows per source, and the counts."""
    sources = load_sources(config)
    pools, held, counts = split_sources(sources, config)
    rendered = {name: render_examples(model, rows, name, config, counts[name]) for name, rows in pools.items()}
    examples = balance_examples(rendered, sources, config, counts)
    if not any(rendered.values()):
        raise DataError(
            f"Every training row is longer than --max-tokens {config.max_tokens} (or was chunked and "
            f"long_rows is 'skip'): {sum(c['skipped_long'] for c in counts.values())} rows skipped. "
            "Raise --max-tokens, pass --long-rows chunk, or add shorter rows."
        )
    if len({ex.label for ex in examples}) < 2:
        raise DataError(f"After skipping rows over --max-tokens {config.max_tokens}, the training rows "
                        "have one label only; tuning needs both. Raise --max-tokens or add rows.")
    for name, c in counts.items():
        log.info("source %s: %s", name, c)
    return examples, held, counts


def _schedule(n: int, config: TuneConfig) -> list[npt.NDArray[np.int64]]:
    """The example indices of every step, all epochs, from the seed alone."""
    steps: list[npt.NDArray[np.int64]] = []
    for epoch in range(config.epochs):
        order = np.random.default_rng([config.seed, epoch]).permutation(n)
        steps.extend(order[i:i + config.batch] for i in range(0, n, config.batch))
    if config.max_steps is not None:
        steps = steps[: config.max_steps]
    return steps


def _micro_batches(examples: Sequence[Example], budget: int) -> list[list[Example]]:
    """Examples of one step in forward passes of similar lengths (little padding)."""
    batches: list[list[Example]] = []
    current: list[Example] = []
    real = 0
    for ex in sorted(examples, key=lambda e: (max(len(p) for p in e.prompts), e.row_id)):
        width = max(len(p) for p in ex.prompts)
        rows = sum(len(e.prompts) for e in current) + len(ex.prompts)
        padded = rows * width
        if current and (padded > budget or padded - (real + ex.n_tokens) > _MAX_PADDING * padded):
            batches.append(current)
            current, real = [], 0
        current.append(ex)
        real += ex.n_tokens
    if current:
        batches.append(current)
    return batches


def _lr(step: int, total: int, config: TuneConfig) -> float:
    warm = max(1, int(math.ceil(config.warmup * total)))
    if step < warm:
        return config.lr * (step + 1) / warm
    return config.lr * max(0.0, (total - step) / max(1, total - warm))


class _Trainer:
    """One run's moving parts: the model, its LoRA, the optimizer and the state."""

    def __init__(self, config: TuneConfig, model: Any, examples: list[Example]) -> None:
        import torch

        self.torch = torch
        self.config = config
        self.model = model
        self.examples = examples
        lm = model.backend.torch_model
        self.peft_model = attach_lora(lm, config, model.spec.id)
        if config.init_adapter is not None:
            load_initial_adapter(self.peft_model, config, len(lm.get_decoder().layers))
        labels = {ex.labels for ex in examples}
        if len(labels) != 1:
            raise JudgelabError(f"The training rows are asked with different label pairs {sorted(labels)}; "
                                "tune one evaluator's labels at a time.")
        resolved = model.resolve_labels(list(labels.pop()))
        if resolved.sequences is not None:
            raise JudgelabError(f"Labels {list(resolved.labels)} share their first tokens and are read as token "
                                "sequences; tuning reads single-token labels only. Tune with labels that start "
                                "differently (Yes/No, A/B).")
        self.cache, split = self._split_forward(lm)
        self.reader = LabelReader(lm, resolved.token_ids, resolved.owner, len(resolved.labels), split)
        params = [p for p in self.peft_model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.0)
        self.params = params
        self.budget = _MICRO_TOKENS["cuda" if model.backend.device_kind == "cuda" else "cpu"]
        if config.autocast == "bf16" and model.backend.device_kind != "cuda":
            flags = cpu_flags()
            if flags is not None and not native_bf16(flags):
                log.warning("--autocast bf16 on a CPU without %s: torch emulates bfloat16 here, which trained "
                            "at 0.038x float32's speed on such a CPU (docs/tuning.md, Training speed). "
                            "Use --autocast none on this machine.", " or ".join(sorted(NATIVE_BF16_FLAGS)))

    def _split_forward(self, lm: PreTrainedModel) -> tuple[HiddenCache | None, SplitForward | None]:
        """With ``cache="memory"``, the two-pass forward (checked once against the full one) and its cache."""
        if self.config.cache == "none":
            return None, None
        decoder = lm.get_decoder()
        first = self.config.layer_indices(len(decoder.layers))[0]
        if first == 0:
            log.warning("--cache memory does nothing when layer 0 is adapted (--layers %s): nothing below it "
                        "is frozen; training without the cache", self.config.layers)
            return None, None
        cache = HiddenCache(self.config.cache_mb * 2**20)
        split = SplitForward(decoder, first, cache)
        shortest = min((p for ex in self.examples for p in ex.prompts), key=len)
        error = check_split(decoder, split, shortest)
        log.info("layers 0-%d run once per prompt and are cached (bound %d MiB); split forward checked "
                 "against the full one: relative difference %.1e", first - 1, self.config.cache_mb, error)
        return cache, split

    def _autocast(self) -> torch.autocast:
        """bfloat16 autocast when ``config.autocast == "bf16"``; otherwise a no-op context."""
        enabled = self.config.autocast == "bf16"
        device = "cuda" if self.model.backend.device_kind == "cuda" else "cpu"
        return self.torch.autocast(device_type=device, dtype=self.torch.bfloat16, enabled=enabled)

    def step(self, indices: npt.NDArray[np.int64], lr: float) -> tuple[float, int]:
        """One optimizer step over ``indices``; returns (mean loss, tokens)."""
        torch = self.torch
        self.peft_model.train()
        for g in self.optimizer.param_groups:
            g["lr"] = lr
        batch = [self.examples[i] for i in indices]
        total = 0.0
        for micro in _micro_batches(batch, self.budget):
            with self._autocast():
                losses = self.reader.example_losses(micro)
            (losses.sum() / len(batch)).backward()
            total += float(losses.detach().sum())
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.peft_model.eval()
        return total / len(batch), sum(ex.n_tokens for ex in batch)


def _evaluate(trainer: _Trainer, rows: Mapping[str, Sequence[LabelledRow]], label: str) -> HeldoutScores:
    import torch

    trainer.peft_model.eval()
    with torch.inference_mode():
        return evaluate_heldout(trainer.model, rows, evaluator=trainer.config.evaluator, label=label)


def _progress(config: TuneConfig, total: int, initial: int) -> tqdm[NoReturn]:
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, disable=not config.progress, unit="step", dynamic_ncols=True,
                desc="tune")


def tune(config: TuneConfig) -> TuneResult:
    """Train a LoRA adapter on the label reading of ``config.model`` and write a tuned judge.

    The same command on the same machine gives the same adapter; a run that
    was stopped or killed resumes from its last checkpoint in ``config.out``.

    Raises
    ------
    BackendUnavailableError
        When peft (``pip install 'judgelab[tune]'``) or the transformers
        backend is missing, or the model has no transformers path.
    DataError
        When a set has one class, or every row is too long.
    ParameterError
        When a target module or the layer range does not fit the model.
    """
    import torch

    import_peft()
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    np.random.seed(config.seed % 2**32)
    model = _load_base(config)
    examples, held, counts = _prepare(model, config)
    scored = {name: [r for r in rows if fits(model, r, config)] for name, rows in held.items()}
    heldout = pick_heldout(scored, config.heldout_max)
    trainer = _Trainer(config, model, examples)
    steps = _schedule(len(examples), config)
    state = load_checkpoint(out, config.training_hash(), trainer.peft_model, trainer.optimizer)
    if state is None:
        state = RunState(training_hash=config.training_hash())
    else:
        log.info("resuming %s at step %d of %d", out, state.step, len(steps))
    if not state.evaluations and any(heldout.values()):
        start = "base" if config.init_adapter is None else "initial adapter"
        state.evaluations.append({"epoch": 0, "step": 0, **_evaluate(trainer, heldout, start)})
    return _run(trainer, steps, state, (heldout, held), counts, out)


def _run(trainer: _Trainer, steps: Sequence[npt.NDArray[np.int64]], state: RunState,
         rows: tuple[dict[str, list[LabelledRow]], dict[str, list[LabelledRow]]], counts: dict[str, SourceCounts],
         out: Path) -> TuneResult:
    config = trainer.config
    heldout, held = rows
    per_epoch = max(1, math.ceil(len(trainer.examples) / config.batch))
    done_now = 0
    bar = _progress(config, len(steps), state.step)
    try:
        while state.step < len(steps):
            started = time.perf_counter()
            loss, tokens = trainer.step(steps[state.step], _lr(state.step, len(steps), config))
            elapsed = time.perf_counter() - started
            state.seconds += elapsed
            state.tokens += tokens
            state.step += 1
            state.timings.append((state.step, tokens, elapsed))
            done_now += 1
            state.losses.append((state.step, loss))
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{state.tokens / max(state.seconds, 1e-9):.0f}")
            end_of_epoch = state.step % per_epoch == 0 or state.step == len(steps)
            if end_of_epoch and any(heldout.values()):
                epoch = math.ceil(state.step / per_epoch)
                state.evaluations.append({"epoch": epoch, "step": state.step,
                                          **_evaluate(trainer, heldout, f"epoch {epoch}")})
            if state.step % config.checkpoint_every == 0 or end_of_epoch:
                save_checkpoint(out, state, trainer.peft_model, trainer.optimizer)
            if config.stop_after is not None and done_now >= config.stop_after and state.step < len(steps):
                save_checkpoint(out, state, trainer.peft_model, trainer.optimizer)
                log.info("stopped after %d steps at step %d; rerun the same command to resume", done_now, state.step)
                return TuneResult(out, None, False, state.step, state.tokens, state.seconds, counts,
                                  state.evaluations, state.timings)
    finally:
        bar.close()
        if trainer.cache is not None:
            log.info("hidden-state cache: %s", trainer.cache.stats())
    from judgelab.tuning._output import write_outputs

    spec_path = write_outputs(trainer, state, heldout_rows=heldout, all_heldout=held, counts=counts, out=out)
    return TuneResult(out, spec_path, True, state.step, state.tokens, state.seconds, counts, state.evaluations,
                      state.timings)
