"""The engine: the only layer that touches a model.

``load_model`` gives a ``JudgeModel`` (the protocol every judge model
satisfies: ``BackendJudgeModel`` in process, ``RemoteJudgeModel`` over HTTP,
the server's queued view); its ``probabilities(prompt, labels)`` answers a
closed question from one prefill. Backends load lazily, so importing
this package imports neither llama_cpp nor torch (nor httpx, which the remote
backend uses to ask judges served elsewhere).
"""

from judgelab.engine._backend import Backend, BackendFacts
from judgelab.engine._info import ModelInfo
from judgelab.engine._judge_model import JudgeModel
from judgelab.engine._label_head import gguf_metadata
from judgelab.engine._labels import ResolvedLabels, default_variants
from judgelab.engine._lazy import LazyModel, ModelSource, spec_is_final
from judgelab.engine._llama_config import LlamaCppConfig
from judgelab.engine._loading import BACKENDS, adapter_file, load_model
from judgelab.engine._model import BackendJudgeModel, Judgment
from judgelab.engine._prompt import Prompt
from judgelab.engine._remote_backend import estimate_tokens
from judgelab.engine._remote_labels import LabelReading, pool_top_logprobs, read_label_text
from judgelab.engine._remote_model import ChatPrompt, RemoteJudgeModel, RemoteJudgment
from judgelab.engine._transformers_config import TransformersConfig

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendJudgeModel",
    "BackendFacts",
    "ChatPrompt",
    "JudgeModel",
    "Judgment",
    "LabelReading",
    "LazyModel",
    "LlamaCppConfig",
    "ModelInfo",
    "ModelSource",
    "Prompt",
    "RemoteJudgeModel",
    "RemoteJudgment",
    "ResolvedLabels",
    "TransformersConfig",
    "adapter_file",
    "default_variants",
    "estimate_tokens",
    "gguf_metadata",
    "load_model",
    "pool_top_logprobs",
    "read_label_text",
    "spec_is_final",
]
