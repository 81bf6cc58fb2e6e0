"""A PEFT LoRA adapter written as a GGUF adapter that llama.cpp loads.

The format is the one llama.cpp's ``convert_lora_to_gguf.py`` writes:
``general.type = "adapter"``, ``adapter.type = "lora"``,
``adapter.lora.alpha``, the base model's ``general.architecture``, and for
each adapted weight ``W`` (in llama.cpp's tensor names, e.g.
``blk.9.attn_q.weight``) two tensors ``W.lora_a`` and ``W.lora_b``: PEFT's
``lora_A`` (rank x in) and ``lora_B`` (out x rank) as they are, which in
ggml's reversed dimension order are (in, rank) and (rank, out). llama.cpp
scales ``B @ A`` by ``alpha / rank``, as PEFT does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    from gguf import TensorNameMap

__all__ = ["export_gguf_adapter"]

_NAME = re.compile(r"^(?:base_model\.model\.)?(?P<base>.+)\.lora_(?P<ab>[AB])(?:\.default)?\.weight$")


def _tensor_map(arch: str, n_layers: int) -> TensorNameMap:
    import gguf

    by_name = {name: enum for enum, name in gguf.MODEL_ARCH_NAMES.items()}
    if arch not in by_name:
        raise JudgelabError(f"gguf {gguf.__version__ if hasattr(gguf, '__version__') else ''} does not know the "
                            f"architecture {arch!r}; cannot name the adapter's tensors for llama.cpp.")
    return gguf.get_tensor_name_map(by_name[arch], n_layers)


def export_gguf_adapter(peft_dir: str | Path, out_path: str | Path, *, arch: str, n_layers: int,
                        name: str = "", half: bool = False) -> Path:
    """Write the PEFT adapter in ``peft_dir`` as a llama.cpp GGUF LoRA adapter at ``out_path``.

    Parameters
    ----------
    peft_dir
        A folder written by PEFT's ``save_pretrained`` (``adapter_config.json``,
        ``adapter_model.safetensors``).
    out_path
        The ``.gguf`` file to write.
    arch
        The base model's ``general.architecture`` (``"gemma3"``).
    n_layers
        The base model's layer count (to map layer names).
    name
        ``general.name`` of the adapter.
    half
        Write the LoRA tensors as float16 (llama.cpp's ``--outtype f16``) instead of float32.
    """
    import gguf
    from safetensors.numpy import load_file

    peft_dir = Path(peft_dir)
    config = json.loads((peft_dir / "adapter_config.json").read_text(encoding="utf-8"))
    tensors = load_file(str(peft_dir / "adapter_model.safetensors"))
    names = _tensor_map(arch, n_layers)
    pairs: dict[str, dict[str, npt.NDArray[np.float16 | np.float32]]] = {}
    for key, value in tensors.items():
        m = _NAME.match(key)
        if m is None:
            raise JudgelabError(f"{peft_dir}: tensor {key!r} is not a LoRA A/B weight; only LoRA adapters "
                                "(no modules_to_save, no embeddings) can be written for llama.cpp.")
        target = names.get_name(m.group("base") + ".weight", try_suffixes=(".weight",))
        if target is None:
            raise JudgelabError(f"{peft_dir}: no llama.cpp tensor for {m.group('base')!r} in architecture {arch!r}.")
        pairs.setdefault(target, {})[m.group("ab")] = value.astype(np.float16 if half else np.float32)
    writer = gguf.GGUFWriter(str(out_path), arch)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(config["lora_alpha"]))
    if name:
        writer.add_name(name)
    for target in sorted(pairs):
        ab = pairs[target]
        if set(ab) != {"A", "B"}:
            raise JudgelabError(f"{peft_dir}: {target} has LoRA {sorted(ab)} only; both A and B are needed.")
        writer.add_tensor(target + ".lora_a", np.ascontiguousarray(ab["A"]))
        writer.add_tensor(target + ".lora_b", np.ascontiguousarray(ab["B"]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return Path(out_path)
