"""Checkpoints of a tuning run: LoRA weights, optimizer, RNG states and the step reached.

A checkpoint is written to a temporary folder and renamed into place, so a
run killed while writing keeps its previous checkpoint.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    import torch
    from peft import PeftModel

    from judgelab.tuning._evaluate import HeldoutEvaluation

__all__ = ["RunState", "save_checkpoint", "load_checkpoint", "CHECKPOINT_DIR"]

CHECKPOINT_DIR = "checkpoint"


@dataclass
class RunState:
    """Where a run is: the next step, the loss curve and the held-out scores so far."""

    training_hash: str
    step: int = 0
    tokens: int = 0
    seconds: float = 0.0
    losses: list[tuple[int, float]] = field(default_factory=list)
    evaluations: list[HeldoutEvaluation] = field(default_factory=list)
    timings: list[tuple[int, int, float]] = field(default_factory=list)  # (step, tokens, seconds) of each step

    def to_json(self) -> dict[str, object]:
        return {"training_hash": self.training_hash, "step": self.step, "tokens": self.tokens,
                "seconds": self.seconds, "losses": self.losses, "evaluations": self.evaluations,
                "timings": self.timings}


def save_checkpoint(out: Path, state: RunState, peft_model: PeftModel, optimizer: torch.optim.Optimizer) -> Path:
    """Write the checkpoint of ``state`` under ``out/checkpoint``."""
    import torch
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    final = out / CHECKPOINT_DIR
    tmp = out / f"{CHECKPOINT_DIR}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # save_embedding_layers=False as in the final save (_output.py): PEFT's "auto" asks the Hugging Face
    # Hub whether the base model's vocabulary changed, a network call at every checkpoint (LoRA here
    # never adapts the embeddings, so the saved weights are the same).
    state_dict = get_peft_model_state_dict(peft_model, save_embedding_layers=False)
    weights = {k: v.detach().contiguous().cpu() for k, v in state_dict.items()}
    save_file(weights, str(tmp / "adapter.safetensors"))
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    rng = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    torch.save(rng, tmp / "rng.pt")
    (tmp / "state.json").write_text(json.dumps(state.to_json(), indent=1), encoding="utf-8")
    old = out / f"{CHECKPOINT_DIR}.old{os.getpid()}"
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def load_checkpoint(out: Path, training_hash: str, peft_model: PeftModel, optimizer: torch.optim.Optimizer) -> RunState | None:
    """Restore the run from ``out/checkpoint``; None when there is none.

    Raises
    ------
    JudgelabError
        When the checkpoint belongs to a run with other training settings.
    """
    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    folder = out / CHECKPOINT_DIR
    if not (folder / "state.json").is_file():
        return None
    data = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    if data.get("training_hash") != training_hash:
        raise JudgelabError(
            f"{folder} is a checkpoint of a run with other training settings (hash "
            f"{data.get('training_hash')}, this run {training_hash}). Use another --out, or delete "
            "the checkpoint folder to start over."
        )
    set_peft_model_state_dict(peft_model, load_file(str(folder / "adapter.safetensors")))
    optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=False))
    rng = torch.load(folder / "rng.pt", weights_only=False)
    torch.set_rng_state(rng["torch"])
    np.random.set_state(rng["numpy"])
    random.setstate(rng["python"])
    if "cuda" in rng and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
    return RunState(
        training_hash=data["training_hash"], step=int(data["step"]), tokens=int(data["tokens"]),
        seconds=float(data["seconds"]), losses=[tuple(x) for x in data["losses"]],
        evaluations=list(data["evaluations"]),
        timings=[tuple(x) for x in data.get("timings", [])],  # checkpoints before timings were kept: none
    )
