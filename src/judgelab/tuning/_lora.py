"""LoRA on a transformers causal LM, and the loss: cross-entropy over the label tokens.

The loss is the served judgment: the logits of the label tokens at the last
prompt position, each label pooling its token variants (log-sum-exp, as
``JudgeModel`` sums their probabilities), softmaxed over the labels. A row
chunked into several prompts is scored, as at inference, by its most
supportive chunk: P(yes) = max over chunks.

Only the adapted layers' LoRA weights require gradients, so autograd records
nothing below the first adapted layer: with the default top-half layers the
backward pass stops halfway down, and the bottom half runs as if under
``torch.no_grad``. With a ``SplitForward`` (``--cache memory``) the bottom
layers run once per prompt, under ``torch.no_grad``, and are read from a
cache after that. The label head runs in float32 even under autocast.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from judgelab.errors import BackendUnavailableError, ParameterError
from judgelab.tuning._config import ADAPTER_WEIGHTS, PEFT_HINT, TuneConfig
from judgelab.tuning._hidden_cache import SplitForward

if TYPE_CHECKING:
    import torch
    from peft import PeftModel
    from torch import Tensor
    from transformers import PreTrainedModel

    from judgelab.tuning._data import Example

__all__ = ["import_peft", "attach_lora", "load_initial_adapter", "LabelReader"]

log = logging.getLogger(__name__)


def import_peft() -> ModuleType:
    """The ``peft`` module, or an error with the install hint."""
    try:
        import peft
    except ImportError as exc:
        raise BackendUnavailableError(
            f"judgelab tune needs peft, which is not installed ({exc}). Install it with: {PEFT_HINT}",
            backend="transformers",
            extra="tune",
        ) from exc
    return peft


def _layer_count(lm: PreTrainedModel) -> int:
    layers = getattr(lm.get_decoder(), "layers", None)
    if layers is None:
        raise ParameterError(f"{type(lm).__name__} has no decoder 'layers'; judgelab tune adapts llama-like "
                             "decoders (Gemma, Llama, Qwen, SmolLM).", name="model")
    return len(layers)


def _module_names(lm: PreTrainedModel) -> set[str]:
    names = set()
    for name, module in lm.get_decoder().layers[0].named_modules():
        if name and type(module).__name__ == "Linear":
            names.add(name.rsplit(".", 1)[-1])
    return names


def attach_lora(lm: PreTrainedModel, config: TuneConfig, base_id: str) -> PeftModel:
    """Inject LoRA weights into ``lm`` (in place) and return the PEFT wrapper.

    Raises
    ------
    ParameterError
        When a target module is not a linear layer of the model's decoder layers.
    """
    peft = import_peft()
    known = _module_names(lm)
    unknown = [m for m in config.target_modules if m not in known]
    if unknown:
        raise ParameterError(
            f"Unknown target module(s) {', '.join(unknown)} for {base_id}: its decoder layers' linear "
            f"modules are {', '.join(sorted(known))}. Pass --target-modules with some of those.",
            name="target_modules",
        )
    layers = config.layer_indices(_layer_count(lm))
    lora = peft.LoraConfig(
        r=config.rank,
        lora_alpha=config.alpha,
        lora_dropout=config.dropout,
        target_modules=list(config.target_modules),
        layers_to_transform=layers,
        layers_pattern="layers",
        bias="none",
        base_model_name_or_path=base_id,
    )
    for p in lm.parameters():
        p.requires_grad_(False)
    with warnings.catch_warnings():  # peft renames the base to the model's folder: the spec id is kept
        warnings.simplefilter("ignore", UserWarning)
        wrapped: PeftModel = peft.get_peft_model(lm, lora)
    wrapped.peft_config["default"].base_model_name_or_path = base_id
    trainable = sum(p.numel() for p in wrapped.parameters() if p.requires_grad)
    log.info("LoRA rank %d on layers %d-%d (%s): %d trainable parameters", config.rank, layers[0],
             layers[-1], ",".join(config.target_modules), trainable)
    return wrapped


def load_initial_adapter(peft_model: PeftModel, config: TuneConfig, n_layers: int) -> None:
    """Start ``peft_model``'s LoRA from the weights of ``config.init_adapter`` (continued training).

    Raises
    ------
    ParameterError
        When the folder is not a PEFT LoRA adapter, or its rank, alpha, target
        modules or layers are not this run's (the weights would not fit, or
        would be scaled differently).
    """
    import json
    from pathlib import Path

    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    folder = Path(str(config.init_adapter))
    try:
        saved = json.loads((folder / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ParameterError(f"init_adapter: cannot read {folder / 'adapter_config.json'} ({exc}); pass a PEFT "
                             "adapter folder, e.g. a tuned judge's peft/.", name="init_adapter") from exc
    ours = {"peft_type": "LORA", "r": config.rank, "lora_alpha": float(config.alpha),
            "target_modules": sorted(config.target_modules), "layers_to_transform": config.layer_indices(n_layers)}
    theirs = {"peft_type": saved.get("peft_type"), "r": saved.get("r"),
              "lora_alpha": float(saved.get("lora_alpha") or 0.0), "target_modules": sorted(saved.get("target_modules") or []),
              "layers_to_transform": saved.get("layers_to_transform")}
    differ = [f"{k} {theirs[k]} (this run: {ours[k]})" for k in ours if theirs[k] != ours[k]]
    if differ:
        raise ParameterError(f"init_adapter: {folder} does not fit this run: its {'; '.join(differ)}. Tune with the "
                             "adapter's settings (--rank, --alpha, --target-modules, --layers) or start a fresh "
                             "adapter.", name="init_adapter")
    weights = load_file(str(folder / ADAPTER_WEIGHTS))
    result = set_peft_model_state_dict(peft_model, weights)
    missing = [k for k in getattr(result, "missing_keys", []) if "lora_" in k]
    if missing or getattr(result, "unexpected_keys", []):
        raise ParameterError(f"init_adapter: {folder}'s weights do not match the run's LoRA modules ("
                             f"{len(missing)} missing, e.g. {missing[:1]}; unexpected "
                             f"{list(getattr(result, 'unexpected_keys', []))[:1]}).", name="init_adapter")
    log.info("LoRA starts from %s (%d tensors)", folder, len(weights))


class LabelReader:
    """Log-probabilities of the labels at the last position of each prompt, with gradients."""

    def __init__(self, lm: Any, token_ids: Sequence[int], owner: Sequence[int], n_labels: int,
                 split: SplitForward | None = None) -> None:
        import torch

        self.torch = torch
        self.lm = lm
        self.decoder = lm.get_decoder()
        self.device = lm.get_input_embeddings().weight.device
        self.ids = torch.tensor(list(token_ids), dtype=torch.long, device=self.device)
        self.owner = torch.tensor(list(owner), dtype=torch.long)
        self.per_label = [(self.owner == j).nonzero().flatten().to(self.device) for j in range(n_labels)]
        self.softcap = getattr(lm.config, "final_logit_softcapping", None)
        self.split = split

    def _last_hidden(self, prompts: Sequence[Sequence[int]]) -> torch.Tensor:
        if self.split is not None:
            return self.split.last_hidden(prompts)[:, -1]
        torch = self.torch
        width = max(len(p) for p in prompts)
        input_ids = torch.zeros((len(prompts), width), dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, p in enumerate(prompts):
            input_ids[row, width - len(p):] = torch.tensor(list(p), dtype=torch.long)
            mask[row, width - len(p):] = 1
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        hidden: Tensor = self.decoder(
            input_ids=input_ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=False,
        ).last_hidden_state[:, -1]
        return hidden

    def log_probs(self, prompts: Sequence[Sequence[int]]) -> torch.Tensor:
        """A (len(prompts), n_labels) tensor of log P(label | prompt), prompts left-padded into one batch."""
        torch = self.torch
        hidden = self._last_hidden(prompts)
        # The label head runs in float32 even under bf16 autocast: the label logits are ~20 in size,
        # where bfloat16's step is 0.125, coarser than the Yes/No margins the loss is learning.
        with torch.autocast(device_type=self.device.type, enabled=False):
            weight = self.lm.get_output_embeddings().weight[self.ids]
            logits = hidden.float() @ weight.float().T
            if self.softcap:
                logits = torch.tanh(logits / self.softcap) * self.softcap
            pooled = torch.stack([torch.logsumexp(logits[:, g], dim=-1) for g in self.per_label], dim=-1)
            log_probs: Tensor = torch.log_softmax(pooled, dim=-1)
        return log_probs

    def example_losses(self, examples: Sequence[Example]) -> torch.Tensor:
        """Cross-entropy of each example (label 1 = the first label, 0 = the second)."""
        torch = self.torch
        prompts = [p for ex in examples for p in ex.prompts]
        logp = self.log_probs(prompts)
        losses = []
        start = 0
        for ex in examples:
            rows = logp[start:start + len(ex.prompts)]
            start += len(ex.prompts)
            if len(ex.prompts) == 1:
                losses.append(-rows[0, 0 if ex.label == 1 else 1])
                continue
            best_yes = rows[:, 0].max()  # the most supportive chunk, as the evaluator scores
            if ex.label == 1:
                losses.append(-best_yes)
            else:
                losses.append(-torch.log1p(-best_yes.exp().clamp(max=1 - 1e-6)))
        stacked: Tensor = torch.stack(losses)
        return stacked
