"""The engine: the only layer that touches a model.

``load_model`` gives a ``JudgeModel``; its ``probabilities(prompt, labels)``
answers a closed question from one prefill. Backends load lazily, so importing
this package imports neither llama_cpp nor torch.
"""

from judgelab.engine._backend import Backend, BackendFacts
from judgelab.engine._info import ModelInfo
from judgelab.engine._label_head import gguf_metadata
from judgelab.engine._labels import ResolvedLabels, default_variants
from judgelab.engine._loading import BACKENDS, adapter_file, load_model
from judgelab.engine._model import JudgeModel, Judgment
from judgelab.engine._prompt import Prompt

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendFacts",
    "JudgeModel",
    "Judgment",
    "ModelInfo",
    "Prompt",
    "ResolvedLabels",
    "adapter_file",
    "default_variants",
    "gguf_metadata",
    "load_model",
]
