"""A checkpoint round-trips a LoRA model's weights and optimizer, and writing one asks no network.

A two-layer torch module stands in for the judge: this tests the checkpoint's files, not a model.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")
peft = pytest.importorskip("peft", reason="needs the tune extra: pip install 'judgelab[tune]'")

from judgelab.tuning import RunState, load_checkpoint, save_checkpoint  # noqa: E402


class _Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(10, 8)
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, ids):  # pragma: no cover - not called
        return self.proj(self.embed(ids))


def _lora(seed: int):
    torch.manual_seed(seed)
    model = peft.get_peft_model(_Tiny(), peft.LoraConfig(r=2, target_modules=["proj"], init_lora_weights=False))
    # As for the real judge: the base is named by a short model name, not a local folder or Hub id.
    model.peft_config["default"].base_model_name_or_path = "gemma-3-270m"
    return model


def _lora_weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.named_parameters() if "lora_" in k}


def test_checkpoint_round_trip_without_hub_lookup(tmp_path, monkeypatch):
    from peft.utils import save_and_load

    def no_network(*args, **kwargs):
        raise AssertionError(f"save_checkpoint asked the Hugging Face Hub: {args}")

    monkeypatch.setattr(save_and_load, "check_file_exists_on_hf_hub", no_network)
    model = _lora(0)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    model(torch.tensor([[1, 2]])).sum().backward()
    optimizer.step()
    state = RunState(training_hash="abc", step=3, tokens=42, seconds=1.5, losses=[(1, 0.7), (3, 0.5)])
    save_checkpoint(tmp_path, state, model, optimizer)

    other = _lora(1)  # other initial weights: the load must overwrite them
    assert any(not torch.equal(a, b) for a, b in zip(_lora_weights(model).values(), _lora_weights(other).values()))
    other_optimizer = torch.optim.AdamW([p for p in other.parameters() if p.requires_grad], lr=1e-2)
    restored = load_checkpoint(tmp_path, "abc", other, other_optimizer)
    assert restored is not None and (restored.step, restored.tokens, restored.losses) == (3, 42, [(1, 0.7), (3, 0.5)])
    for (name, a), b in zip(_lora_weights(model).items(), _lora_weights(other).values()):
        assert torch.equal(a, b), name
    assert other_optimizer.state_dict()["state"].keys() == optimizer.state_dict()["state"].keys()
