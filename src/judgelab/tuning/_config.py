"""``TuneConfig``: everything a tuning run depends on, as one frozen value."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from judgelab.errors import ParameterError, check_parameter
from judgelab.weights import sha256_file

__all__ = ["TuneConfig", "DEFAULT_TARGET_MODULES", "PAIRED_KINDS", "PEFT_HINT", "is_paired_source"]

PEFT_HINT = "pip install 'judgelab[tune]'"

#: Attention and MLP projections of llama-like decoders (Gemma, Llama, Qwen, SmolLM).
DEFAULT_TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

# Fields that do not change what is trained (so a resumed run may change them).
_RUNTIME_FIELDS = {"out", "threads", "progress", "stop_after", "checkpoint_every", "name", "licences", "cache_mb"}
# Fields added after runs were checkpointed: hashed only when set, so those runs still resume.
_HASHED_WHEN_SET: dict[str, object] = {"cache": "none", "split_seed": None, "init_adapter": None}
#: The weights file of a PEFT adapter folder (``init_adapter``).
ADAPTER_WEIGHTS = "adapter_model.safetensors"


@dataclass(frozen=True)
class TuneConfig:
    """Settings of ``judgelab.tuning.tune``.

    Parameters
    ----------
    sets
        Labelled sets, as ``calibrate --set`` takes them: JSONL files or
        ``KIND:PATH`` importers (``snli:``, ``summedits:``, ``wice:``...).
        Each is one *source*: rows are balanced per source and per label.
    out
        The output folder (adapter, spec, report, checkpoints).
    model
        The base model: a spec id or ``.toml`` with a transformers path.
    exclude
        Sets (as ``sets`` takes them) that are never trained on: a row of
        ``sets`` is dropped when it shares a row, a document, a claim, a
        sentence of 60 or more characters or a near-duplicate document with
        a row of these sets (``judgelab sets overlap``, the same check), and
        it is dropped before any deletion pair is made from it (e.g. the
        quick start's evaluation rows). The counts say how many were
        dropped, by kind.
    weights
        One weight per set (default 1 each): a source's share of the
        training rows is proportional to it; 0 keeps a source for held-out
        evaluation only.
    evaluator
        The evaluator whose prompts are trained (``fact-checking``,
        ``bespoke-minicheck``, ``relevancy``...); ``None``: each row's task
        default. Rows of other tasks use their task's default.
    rows
        Training rows in all (after balancing); ``None``: every balanced row.
    heldout
        Share of each source's units (``LabelledRow.unit``: a document's rows
        and ``meta.pair`` edits stay together) kept out of training, for the report.
    heldout_max
        At most this many held-out rows per source are scored in the report.
    max_tokens
        Longest training prompt; longer rows are skipped or chunked
        (``long_rows``) and counted.
    long_rows
        ``"skip"`` or ``"chunk"`` (the evaluator's chunks; the row's
        probability is the largest chunk's, as at inference).
    chunk_tokens
        The document chunk length (tokens) used to render the training rows
        and written into the tuned spec, so that the tuned judge reads
        documents in pieces of the size it was trained on; ``None``: the
        base spec's.
    rank, alpha, dropout, target_modules, layers
        LoRA settings; ``layers`` is ``"top-half"`` (default), ``"top-K"``
        (the top K decoder layers; ``--adapt-top K``), ``"all"`` or
        ``"A-B"``. Nothing below the first adapted layer trains, so the
        backward pass stops there: fewer adapted layers, less backward.
    epochs, max_steps, lr, batch, warmup
        Optimisation: AdamW, linear warm-up over ``warmup`` of the steps
        then linear decay; ``batch`` rows per step.
    seed
        Seeds the sampling, the order and torch, and the held-out split
        unless ``split_seed`` is given.
    split_seed
        Seeds the held-out split alone (``None``: ``seed``). Two runs with
        different seeds and one ``split_seed`` hold out the same units, so
        their adapters can be compared paired on the same held-out rows.
    device, dtype, threads
        ``cpu``/``cuda``/``auto``; ``auto`` dtype is float32 on CPU and
        bfloat16 on cuda; torch CPU threads.
    autocast
        ``"bf16"``: run the forward and backward passes under bfloat16
        autocast (weights, LoRA and optimizer stay float32); ``"none"``:
        the model's dtype throughout. On CPUs with AMX or AVX-512 BF16 this
        is several times faster (``docs/tuning.md``).
    cache
        ``"memory"``: the frozen layers below the first adapted layer run
        once per prompt (alone, under ``torch.no_grad``) and their output is
        kept in memory, so later epochs and repeated prompts run the adapted
        layers only (``judgelab.tuning._hidden_cache``); ``"none"``: every
        step runs the whole model (the default). A resumed run refills the
        cache; each prompt's cached state is the one a miss recomputes.
    cache_mb
        The cache's bound in MiB (hidden size x 4 bytes per prompt token in
        float32); prompts beyond it are recomputed every epoch.
    checkpoint_every
        Steps between checkpoints (adapter, optimizer, RNG, data position).
    stop_after
        Stop (with a checkpoint) after this many steps of this invocation;
        the same command resumes.
    progress
        Show a tqdm bar with loss, tokens/s and ETA.
    name
        The tuned spec's id (default ``<base id>-tuned``).
    licences
        The licence of each set's text, one per set (or none): recorded in
        the provenance, not used in training.
    init_adapter
        A PEFT adapter folder (``adapter_config.json``,
        ``adapter_model.safetensors``, e.g. a shipped judge's ``peft/``) whose
        LoRA weights start the run instead of PEFT's zero-B initialisation:
        continued training of an adapter. Its rank, alpha, target modules and
        layers must be the run's. ``None``: a fresh adapter. The training
        hash holds the weights' SHA-256, not the path, so a moved folder resumes.
    """

    sets: tuple[str, ...]
    out: str
    model: str = "gemma-3-270m"
    weights: tuple[float, ...] | None = None
    exclude: tuple[str, ...] = ()
    evaluator: str | None = None
    rows: int | None = None
    heldout: float = 0.1
    heldout_max: int = 100
    max_tokens: int = 512
    long_rows: str = "skip"
    chunk_tokens: int | None = None
    rank: int = 16
    alpha: float = 32.0
    dropout: float = 0.0
    target_modules: tuple[str, ...] = DEFAULT_TARGET_MODULES
    layers: str = "top-half"
    epochs: int = 1
    max_steps: int | None = None
    lr: float = 2e-4
    batch: int = 8
    warmup: float = 0.05
    seed: int = 0
    split_seed: int | None = None
    device: str = "cpu"
    dtype: str = "auto"
    threads: int | None = None
    autocast: str = "none"
    cache: str = "none"
    cache_mb: int = 2048
    checkpoint_every: int = 50
    stop_after: int | None = None
    progress: bool = True
    name: str | None = None
    licences: tuple[str, ...] = ()
    init_adapter: str | None = None

    def __post_init__(self) -> None:
        where = "TuneConfig"
        check_parameter(len(self.sets) >= 1, "sets", where, "at least one labelled set", self.sets)
        check_parameter(not self.licences or len(self.licences) == len(self.sets), "licences", where,
                        f"one licence per set ({len(self.sets)}) or none", self.licences)
        check_parameter(self.weights is None or (len(self.weights) == len(self.sets) and all(
            w >= 0 for w in self.weights) and sum(self.weights) > 0), "weights", where,
            f"{len(self.sets)} non-negative numbers (one per set), not all 0", self.weights)
        check_parameter(0.0 <= self.heldout < 1.0, "heldout", where, "a share in [0, 1)", self.heldout)
        check_parameter(self.max_tokens >= 16, "max_tokens", where, "an int >= 16", self.max_tokens)
        check_parameter(self.long_rows in ("skip", "chunk"), "long_rows", where, "'skip' or 'chunk'", self.long_rows)
        check_parameter(self.chunk_tokens is None or self.chunk_tokens >= 32, "chunk_tokens", where,
                        "an int >= 32 or None", self.chunk_tokens)
        check_parameter(self.autocast in ("none", "bf16"), "autocast", where, "'none' or 'bf16'", self.autocast)
        check_parameter(self.cache in ("none", "memory"), "cache", where, "'none' or 'memory'", self.cache)
        check_parameter(self.cache_mb >= 1, "cache_mb", where, "an int >= 1 (MiB)", self.cache_mb)
        check_parameter(self.rank >= 1, "rank", where, "an int >= 1", self.rank)
        check_parameter(self.epochs >= 1, "epochs", where, "an int >= 1", self.epochs)
        check_parameter(self.batch >= 1, "batch", where, "an int >= 1", self.batch)
        check_parameter(self.lr > 0, "lr", where, "a number > 0", self.lr)
        check_parameter(0.0 <= self.warmup < 1.0, "warmup", where, "a share in [0, 1)", self.warmup)
        check_parameter(self.device in ("cpu", "cuda", "auto"), "device", where, "'cpu', 'cuda' or 'auto'", self.device)
        check_parameter(self.checkpoint_every >= 1, "checkpoint_every", where, "an int >= 1", self.checkpoint_every)
        check_parameter(bool(self.target_modules), "target_modules", where, "at least one module name",
                        self.target_modules)
        if self.init_adapter is not None:  # before the model loads: a typo costs no minutes
            _adapter_weights(self.init_adapter)
        check_parameter(self.layers in ("top-half", "all") or _is_range(self.layers) or _top_k(self.layers) > 0,
                        "layers", where, "'top-half', 'top-K' (K >= 1), 'all' or 'A-B'", self.layers)

    def source_weights(self) -> tuple[float, ...]:
        return self.weights if self.weights is not None else tuple(1.0 for _ in self.sets)

    @property
    def heldout_seed(self) -> int:
        """The seed of the held-out split: ``split_seed``, else ``seed``."""
        return self.seed if self.split_seed is None else self.split_seed

    def training_hash(self) -> str:
        """A hash of the fields that decide the adapter (a resumed run must match it)."""
        data = {k: v for k, v in asdict(self).items() if k not in _RUNTIME_FIELDS
                and not (k in _HASHED_WHEN_SET and v == _HASHED_WHEN_SET[k])}
        if self.init_adapter is not None:  # the weights decide the run, not where they lie
            data["init_adapter"] = sha256_file(_adapter_weights(self.init_adapter))
        if data.get("split_seed") == self.seed:
            del data["split_seed"]  # the same split as leaving it unset
        if any(is_paired_source(spec) for spec in self.sets):
            # Paired sources are drawn in whole units (``balance_examples``) since that draw was added; a
            # checkpoint of a run drawn row by row must not resume under it, and older hashes stay valid.
            data["pair_draw"] = "whole-units"
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=list).encode()).hexdigest()[:16]

    def layer_indices(self, n_layers: int) -> list[int]:
        """The decoder layers that get LoRA weights."""
        if self.layers == "all":
            return list(range(n_layers))
        if self.layers == "top-half":
            return list(range(n_layers // 2, n_layers))
        if (k := _top_k(self.layers)) > 0:
            check_parameter(k <= n_layers, "layers", "TuneConfig",
                            f"top-K with K at most {n_layers} (the model has {n_layers} layers)", self.layers)
            return list(range(n_layers - k, n_layers))
        lo, hi = (int(x) for x in self.layers.split("-"))
        check_parameter(0 <= lo <= hi < n_layers, "layers", "TuneConfig",
                        f"a range within 0-{n_layers - 1} (the model has {n_layers} layers)", self.layers)
        return list(range(lo, hi + 1))


#: Generators whose rows are pairs (a supported twin and its edit, ``meta["pair"]``): trained in whole units.
PAIRED_KINDS = ("num", "swap", "partial")


def is_paired_source(spec: str) -> bool:
    """Whether set ``spec`` is made by a pair generator (``PAIRED_KINDS``), e.g. ``num:fever.jsonl``."""
    kind, sep, _ = str(spec).partition(":")
    return bool(sep) and kind in PAIRED_KINDS


def _adapter_weights(folder: str) -> Path:
    """The weights file of the PEFT adapter folder ``folder``; a ParameterError when there is none."""
    path = Path(folder) / ADAPTER_WEIGHTS
    if not path.is_file():
        raise ParameterError(f"init_adapter: {path} does not exist; pass a PEFT adapter folder (one with "
                             f"adapter_config.json and {ADAPTER_WEIGHTS}, e.g. a tuned judge's peft/).",
                             name="init_adapter")
    return path


def _top_k(text: str) -> int:
    """K of ``"top-K"``; 0 when ``text`` is not of that form."""
    head, _, k = text.partition("top-")
    return int(k) if not head and k.isdigit() else 0


def _is_range(text: str) -> bool:
    lo, sep, hi = text.partition("-")
    return bool(sep) and lo.isdigit() and hi.isdigit()
