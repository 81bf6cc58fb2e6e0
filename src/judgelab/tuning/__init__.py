"""Tuning: labelled sets -> a LoRA adapter that teaches a model's label reading.

``tune(TuneConfig(...))`` reads rows through calibration's set loading,
renders them with the evaluators' own templates, trains LoRA weights (PEFT,
``pip install 'judgelab[tune]'``) on the transformers backend with the
served loss (cross-entropy over the label tokens at the answer position),
and writes the PEFT adapter, a llama.cpp GGUF adapter and a model spec with
an ``[adapter]`` table that both backends load. Nothing here is imported by
``import judgelab``; torch and peft load when a run starts.
"""

from judgelab.tuning._checkpoint import RunState, load_checkpoint, save_checkpoint
from judgelab.tuning._config import DEFAULT_TARGET_MODULES, PAIRED_KINDS, PEFT_HINT, TuneConfig, is_paired_source
from judgelab.tuning._cpu import cpu_flags, native_bf16
from judgelab.tuning._data import Example, Source, balance_examples, heldout_split, load_sources, source_names, split_sources
from judgelab.tuning._evaluate import evaluate_heldout
from judgelab.tuning._gguf import export_gguf_adapter
from judgelab.tuning._hidden_cache import HiddenCache, SplitForward, check_split
from judgelab.tuning._lora import LabelReader, attach_lora
from judgelab.tuning._output import PROVENANCE_FILE, SPEC_FILE, heldout_file_name
from judgelab.tuning._report import FigureMarks, tuning_report
from judgelab.tuning._report import write_report as write_tuning_report
from judgelab.tuning._ship import ship_adapter
from judgelab.tuning._train import TuneResult, tune
from judgelab.weights import sha256_file

__all__ = [
    "DEFAULT_TARGET_MODULES",
    "Example",
    "FigureMarks",
    "HiddenCache",
    "LabelReader",
    "PAIRED_KINDS",
    "PEFT_HINT",
    "PROVENANCE_FILE",
    "RunState",
    "Source",
    "SPEC_FILE",
    "SplitForward",
    "TuneConfig",
    "TuneResult",
    "attach_lora",
    "balance_examples",
    "check_split",
    "cpu_flags",
    "evaluate_heldout",
    "export_gguf_adapter",
    "heldout_file_name",
    "heldout_split",
    "is_paired_source",
    "load_checkpoint",
    "load_sources",
    "native_bf16",
    "save_checkpoint",
    "split_sources",
    "sha256_file",
    "source_names",
    "ship_adapter",
    "tune",
    "tuning_report",
    "write_tuning_report",
]
