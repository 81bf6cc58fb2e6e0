"""Read llama.cpp's final hidden state and stop before the output layer.

llama.cpp lets a context observe graph nodes through an eval callback
(``llama_context_params.cb_eval``): asked about each node, the callback says
whether it wants that node's data; once the node is computed it gets the
tensor and may return False to stop the rest of the graph. ``HiddenCapture``
asks for ``result_norm`` (the normalised hidden state of the rows that want
output, the input of the output layer), copies it out and stops, so the
full-vocabulary matrix product is never run. The KV cache is already written
by then: its stores come earlier in the graph.

The tensor is read through ggml's public ``struct ggml_tensor`` layout
(ggml.h); ``HiddenCapture`` checks name, type, shape and strides before
trusting what it reads, and the backend compares the result with the full
output layer once per model.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from types import ModuleType

import numpy as np
import numpy.typing as npt

__all__ = ["HiddenCapture"]

_GGML_MAX_DIMS = 4
_GGML_MAX_SRC = 10
_GGML_MAX_OP_PARAMS = 64
_GGML_MAX_NAME = 64
_GGML_TYPE_F32 = 0
_NODE = b"result_norm"


class _GgmlTensor(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * _GGML_MAX_DIMS),
        ("nb", ctypes.c_size_t * _GGML_MAX_DIMS),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * (_GGML_MAX_OP_PARAMS // 4)),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * _GGML_MAX_SRC),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * _GGML_MAX_NAME),
        ("extra", ctypes.c_void_p),
        ("padding", ctypes.c_char * 8),
    ]


def _find_tensor_get(llama_cpp_module: ModuleType) -> "ctypes._NamedFuncPointer":
    """ggml's ``ggml_backend_tensor_get``: through libllama where the loader
    resolves dependencies (Linux, macOS), else from the ggml-base library
    shipped beside it (Windows). Raises OSError when neither has it."""
    try:
        tensor_get: ctypes._NamedFuncPointer = llama_cpp_module.llama_cpp._lib.ggml_backend_tensor_get
        return tensor_get
    except AttributeError:
        pass
    lib_dir = Path(llama_cpp_module.__file__ or ".").parent / "lib"
    for path in sorted(lib_dir.glob("*ggml-base*")):
        try:
            return ctypes.CDLL(str(path)).ggml_backend_tensor_get
        except (OSError, AttributeError):
            continue
    raise OSError(f"ggml_backend_tensor_get not found in libllama or {lib_dir}")


class HiddenCapture:
    """An eval callback that, while armed, copies ``result_norm`` and stops the graph.

    Unarmed, it asks for no node and llama.cpp computes the whole graph as
    usual (full logits). ``rows`` holds the captured hidden states of the last
    armed decode (n_outputs x n_embd, in output order), or None when the node
    was not seen or did not look as expected.
    """

    def __init__(self, llama_cpp_module: ModuleType, n_embd: int) -> None:
        self._tensor_get = _find_tensor_get(llama_cpp_module)
        self._tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t]
        self._tensor_get.restype = None
        self._n_embd = n_embd
        self.armed = False
        self.rows: npt.NDArray[np.float32] | None = None
        # Keep a reference: llama.cpp holds only the C function pointer.
        self.callback = llama_cpp_module.ggml_backend_sched_eval_callback(self._on_node)

    def arm(self) -> None:
        self.rows = None
        self.armed = True

    def disarm(self) -> npt.NDArray[np.float32] | None:
        self.armed = False
        rows, self.rows = self.rows, None
        return rows

    def _on_node(self, tensor_ptr: int | None, ask: bool, _user_data: object) -> bool:
        if not self.armed or not tensor_ptr:
            return False
        tensor = _GgmlTensor.from_address(tensor_ptr)
        if tensor.name != _NODE:
            return False
        if ask:
            return True
        n_embd, n_rows = int(tensor.ne[0]), int(tensor.ne[1])
        if (
            tensor.type != _GGML_TYPE_F32
            or n_embd != self._n_embd
            or tensor.ne[2] != 1
            or tensor.ne[3] != 1
            or tensor.nb[0] != 4
            or tensor.nb[1] != 4 * n_embd
        ):
            self.armed = False  # not the layout we know: let the graph run to the end
            return True
        rows = np.empty((n_rows, n_embd), dtype=np.float32)
        self._tensor_get(tensor_ptr, rows.ctypes.data, 0, rows.nbytes)
        self.rows = rows
        return False  # stop: the output layer is not needed
