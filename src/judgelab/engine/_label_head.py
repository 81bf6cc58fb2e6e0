"""Label logits without the full-vocabulary output layer.

A judgment needs the logits of a handful of label tokens, yet llama.cpp
computes all of them: one row of the output matrix per vocabulary entry. For
Gemma's 262,144-token vocabulary that matrix-vector product reads ~180 MB of
weights per judgment: 14 ms of a 80 ms judgment of 16 new tokens on 2 cores
(``benchmarks/label_head.py``). ``LabelHead`` instead takes the final hidden state (llama.cpp's
``result_norm`` tensor, the input of the output layer) and multiplies it by
the rows of the label tokens only.

To give the numbers llama.cpp itself would give, the hidden state is first
rounded the way ggml's CPU matmul rounds its input for the weight type
(8-bit blocks for quantised weights, fp16 for fp16 weights), and the weight
rows are dequantised exactly. What remains is float summation order, ~1e-6
of a logit. The backend still checks each model once against the full
output layer before trusting this path (see ``LlamaCppBackend``).
"""

from __future__ import annotations

import logging
import mmap
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["LabelHead", "load_label_head", "gguf_metadata"]

#: A GGUF metadata value judgelab reads (arrays are skipped).
GgufScalar = int | float | str

log = logging.getLogger(__name__)

# Weight types whose matmul input is quantised to Q8_0 / Q8_1 blocks of 32.
_Q8_0_INPUT = {"Q4_0", "Q5_0", "Q8_0", "IQ4_NL", "MXFP4"}
_Q8_1_INPUT = {"Q4_1", "Q5_1"}
# Weight types whose matmul input is quantised to Q8_K blocks of 256.
_Q8_K_INPUT = {
    "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
    "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M", "IQ4_XS", "TQ1_0", "TQ2_0",
}


def _round_q8_0(h: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """ggml's AVX/AVX2 ``quantize_row_q8_0`` (also Q8_1's values), dequantised."""
    x = h.astype(np.float32).reshape(h.shape[0], -1, 32)
    amax = np.abs(x).max(axis=-1, keepdims=True)
    d = (amax / np.float32(127)).astype(np.float16).astype(np.float32)  # stored as fp16
    with np.errstate(divide="ignore"):
        inv = np.where(amax != 0, np.float32(127) / amax, np.float32(0)).astype(np.float32)
    q = np.rint(x * inv)  # round half to even, as _mm256_round_ps(_MM_ROUND_NEAREST)
    rounded: npt.NDArray[np.float32] = (q * d).reshape(h.shape)
    return rounded


def _round_q8_k(h: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """ggml's ``quantize_row_q8_K_ref``, dequantised."""
    x = h.astype(np.float32).reshape(h.shape[0], -1, 256)
    where = np.abs(x).argmax(axis=-1)[..., None]  # first index of the largest |x|, as the C loop
    signed_max = np.take_along_axis(x, where, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        iscale = np.where(signed_max != 0, np.float32(-127) / signed_max, np.float32(0)).astype(np.float32)
        q = np.minimum(np.rint(iscale * x), 127)
        d = np.where(iscale != 0, np.float32(1) / iscale, np.float32(0)).astype(np.float32)
    rounded: npt.NDArray[np.float32] = (q * d).reshape(h.shape)
    return rounded


def _round_bf16(h: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    bits = h.astype(np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # round to nearest even
    return rounded.astype(np.uint32).view(np.float32)


def _input_rounding(type_name: str) -> Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float32]] | None:
    if type_name in _Q8_0_INPUT or type_name in _Q8_1_INPUT:
        return _round_q8_0
    if type_name in _Q8_K_INPUT:
        return _round_q8_k
    if type_name == "F16":
        return lambda h: h.astype(np.float16).astype(np.float32)
    if type_name == "BF16":
        return _round_bf16
    if type_name == "F32":
        return lambda h: h.astype(np.float32)
    return None


class LabelHead:
    """The output layer restricted to the rows asked for."""

    def __init__(self, tensor: "_TensorInfo", rounding: Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float32]], softcap: float | None) -> None:
        self._tensor = tensor
        self.type_name = tensor.type_name
        self._round = rounding
        self.softcap = softcap
        self._rows: dict[int, npt.NDArray[np.float64]] = {}

    @property
    def n_embd(self) -> int:
        return self._tensor.n_cols

    def _weights(self, ids: Sequence[int]) -> npt.NDArray[np.float64]:
        missing = [t for t in ids if t not in self._rows]
        if missing:
            for t, row in zip(missing, self._tensor.read_rows(missing), strict=True):
                self._rows[t] = row.astype(np.float64)
        return np.stack([self._rows[t] for t in ids])

    def logits(self, hidden: npt.NDArray[np.float32], ids: Sequence[int]) -> npt.NDArray[np.float64]:
        """Logits of ``ids`` for each row of ``hidden`` (n_rows x n_embd)."""
        x = self._round(np.atleast_2d(hidden)).astype(np.float64)
        out: npt.NDArray[np.float64] = x @ self._weights(ids).T
        if self.softcap:
            out = np.tanh(out / self.softcap) * self.softcap
        return out


def load_label_head(model_path: str | Path) -> LabelHead | None:
    """The output layer of a GGUF model, or None where this file's layout is not understood."""
    try:
        header = _read_header(Path(model_path))
    except (OSError, ValueError, struct.error) as exc:
        log.debug("label head: cannot read %s: %s", model_path, exc)
        return None
    tensor = header.tensors.get("output.weight") or header.tensors.get("token_embd.weight")
    if tensor is None or tensor.n_rows <= 0:
        return None
    rounding = _input_rounding(tensor.type_name)
    if rounding is None:
        return None
    arch = header.values.get("general.architecture")
    softcap = header.values.get(f"{arch}.final_logit_softcapping") if arch else None
    return LabelHead(tensor, rounding, float(softcap) if softcap else None)


def gguf_metadata(path: str | Path) -> dict[str, GgufScalar]:
    """The scalar and string metadata of a GGUF file (arrays such as the vocabulary are left out)."""
    return {k: v for k, v in _read_header(Path(path)).values.items() if v is not None}


# -- a minimal GGUF reader -------------------------------------------------------
#
# gguf.GGUFReader maps every metadata array into numpy objects; for a
# 262,144-token vocabulary that takes seconds and hundreds of MB. Only a few
# scalars and one tensor's location are needed here, so arrays are skipped.

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class _TensorInfo:
    def __init__(self, path: Path, shape: tuple[int, ...], type_id: int, offset: int) -> None:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        self.path = path
        self.qtype = GGMLQuantizationType(type_id)
        self.type_name = self.qtype.name
        self.n_cols = shape[0]
        self.n_rows = int(np.prod(shape[1:])) if len(shape) > 1 else 0
        block, size = GGML_QUANT_SIZES[self.qtype]
        self.row_bytes = self.n_cols // block * size
        self.offset = offset

    def read_rows(self, rows: Sequence[int]) -> list[npt.NDArray[np.float32]]:
        from gguf.quants import dequantize

        out = []
        with open(self.path, "rb") as f:
            for r in rows:
                if not 0 <= r < self.n_rows:
                    raise IndexError(f"token id {r} is outside the output layer's {self.n_rows} rows")
                f.seek(self.offset + r * self.row_bytes)
                raw = np.frombuffer(f.read(self.row_bytes), dtype=np.uint8)
                out.append(dequantize(raw[None, :], self.qtype).reshape(-1))
        return out


class _Header:
    def __init__(self) -> None:
        self.values: dict[str, GgufScalar | None] = {}
        self.tensors: dict[str, _TensorInfo] = {}


def _read_header(path: Path) -> _Header:
    header = _Header()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        off = 0

        def unpack(fmt: str) -> Any:  # struct's values are untyped
            nonlocal off
            value = struct.unpack_from(fmt, buf, off)[0]
            off += struct.calcsize(fmt)
            return value

        def string() -> str:
            nonlocal off
            n = unpack("<Q")
            off += n
            return bytes(buf[off - n : off]).decode("utf-8", errors="replace")

        def value(type_id: int) -> GgufScalar | None:
            nonlocal off
            if type_id in _SCALARS:
                scalar: GgufScalar = unpack(_SCALARS[type_id])
                return scalar
            if type_id == _STRING:
                return string()
            if type_id == _ARRAY:
                item, count = unpack("<I"), unpack("<Q")
                if item in _SCALARS:
                    off += count * struct.calcsize(_SCALARS[item])
                elif item == _STRING:  # a vocabulary: skip without decoding
                    length = struct.Struct("<Q").unpack_from
                    for _ in range(count):
                        off += 8 + length(buf, off)[0]
                else:
                    for _ in range(count):
                        value(item)
                return None  # arrays are not needed here
            raise ValueError(f"unknown GGUF value type {type_id}")

        if buf[:4] != b"GGUF":
            raise ValueError("not a GGUF file")
        off = 4
        if unpack("<I") < 2:
            raise ValueError("GGUF version 1 is not supported")
        n_tensors, n_kv = unpack("<Q"), unpack("<Q")
        for _ in range(n_kv):
            key = string()
            header.values[key] = value(unpack("<I"))
        infos = []
        for _ in range(n_tensors):
            name = string()
            shape = tuple(unpack("<Q") for _ in range(unpack("<I")))
            infos.append((name, shape, unpack("<I"), unpack("<Q")))
        alignment = int(header.values.get("general.alignment") or 32)
        data_start = -(-off // alignment) * alignment
    for name, shape, type_id, offset in infos:
        if name in ("output.weight", "token_embd.weight"):
            header.tensors[name] = _TensorInfo(path, shape, type_id, data_start + offset)
    return header
