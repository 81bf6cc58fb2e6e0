"""What a finished run writes: the PEFT and GGUF adapters, the tuned spec, held-out rows, provenance, report."""

from __future__ import annotations

import json
import logging
import platform
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.calibration import LabelledRow, write_rows
from judgelab.engine import gguf_metadata
from judgelab.specs import ModelSpec, load_spec
from judgelab.tuning._checkpoint import RunState
from judgelab.tuning._config import ADAPTER_WEIGHTS
from judgelab.weights import resolve_weights, sha256_file

if TYPE_CHECKING:
    from judgelab.tuning._data import SourceCounts

__all__ = ["write_outputs", "machine_description", "heldout_file_name", "SPEC_FILE", "PROVENANCE_FILE"]

log = logging.getLogger(__name__)

SPEC_FILE = "judge.toml"
PROVENANCE_FILE = "PROVENANCE.json"


def heldout_file_name(source: str) -> str:
    """The file a run writes a source's held-out rows to, under ``OUT/heldout/`` (``d2c:fib`` -> ``d2c-fib.jsonl``)."""
    return f"{source.replace(':', '-').replace('#', '-')}.jsonl"


def machine_description() -> str:
    """The CPU model (``lscpu``'s Model name) and core count, or the platform when unknown."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        name = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Model name")), "")
    except (OSError, subprocess.SubprocessError):
        name = ""
    import os

    return f"{name or platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}"


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _spec_data(base: ModelSpec, name: str, adapter: dict[str, object]) -> dict[str, object]:
    data = base.model_dump(exclude={"source_path", "adapter"}, exclude_none=True)
    data["id"] = name
    data["description"] = f"{base.id} with a LoRA adapter tuned by judgelab tune on its label reading."
    if base.licence:  # an adapter is a derivative of its base: the base's terms come with it
        data["licence"] = f"{base.licence} (the LoRA adapter is a derivative of {base.id})"
    data["adapter"] = adapter
    return data


def write_spec(base: ModelSpec, name: str, out: Path, peft_dir: Path, gguf_path: Path) -> Path:
    """``out/judge.toml``: the base spec's fields, a new id, and an ``[adapter]`` table (relative paths)."""
    from judgelab.tuning._toml import dump_toml

    adapter = {
        "base": base.id,
        "gguf": gguf_path.name,
        "gguf_sha256": sha256_file(gguf_path),
        "peft": peft_dir.name,
        "peft_sha256": sha256_file(peft_dir / "adapter_model.safetensors"),
        "scale": 1.0,
    }
    text = dump_toml(_spec_data(base, name, adapter), header=(
        f"{name}: {base.id} with a LoRA adapter written by judgelab tune.\n"
        "Paths in [adapter] are relative to this file; see PROVENANCE.json for how it was trained."))
    ModelSpec(**tomllib.loads(text))  # what is written must read back as a spec
    path = out / SPEC_FILE
    path.write_text(text, encoding="utf-8")
    return path


def _set_files(sets: tuple[str, ...]) -> list[dict[str, str]]:
    files = []
    for spec in sets:
        text = spec
        kind, sep, rest = text.partition(":")
        while sep and len(kind) > 1 and not Path(text).exists():  # KIND:PATH, d2c:KIND:PATH
            text = rest
            kind, sep, rest = text.partition(":")
        path = Path(text)
        for f in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if f.is_file():
                files.append({"set": spec, "file": str(f), "sha256": sha256_file(f)})
    return files


def _excluded_totals(counts: Mapping[str, SourceCounts]) -> dict[str, int]:
    """Rows excluded for overlapping the ``exclude`` sets, by kind, over every source (and ``total``)."""
    totals: dict[str, int] = {}
    for c in counts.values():
        for kind, n in (c.get("excluded") or {}).items():
            totals[kind] = totals.get(kind, 0) + int(n)
    totals["total"] = sum(totals.values())
    totals["dropped_overlapping_heldout"] = sum(int(c.get("dropped_overlapping_heldout", 0)) for c in counts.values())
    return totals


def write_outputs(trainer: Any, state: RunState, *, heldout_rows: Mapping[str, Sequence[LabelledRow]],
                  all_heldout: Mapping[str, Sequence[LabelledRow]], counts: dict[str, SourceCounts], out: Path) -> Path:
    """Save the adapter in both formats, the tuned spec, the held-out rows, provenance and report."""
    from judgelab.tuning._gguf import export_gguf_adapter
    from judgelab.tuning._report import write_report

    config = trainer.config
    base = load_spec(config.model)
    if config.chunk_tokens is not None:
        base = base.model_copy(update={"chunk_tokens": config.chunk_tokens})
    name = config.name or f"{base.id}-tuned"
    peft_dir = out / "peft"
    trainer.peft_model.save_pretrained(str(peft_dir), save_embedding_layers=False)
    lm = trainer.model.backend.torch_model
    arch = str(gguf_metadata(resolve_weights(base)).get("general.architecture", "")) if base.format == "gguf" else ""
    gguf_path = export_gguf_adapter(peft_dir, out / "adapter.gguf", arch=arch or lm.config.model_type,
                                    n_layers=len(lm.get_decoder().layers), name=name)
    spec_path = write_spec(base, name, out, peft_dir, gguf_path)
    held = [r for rows in all_heldout.values() for r in rows]
    write_rows(held, out / "heldout.jsonl")
    for source, rows in all_heldout.items():
        write_rows(rows, out / "heldout" / heldout_file_name(source))
    provenance = {
        "command": " ".join(sys.argv),
        "spec": name,
        "base": base.id,
        "config": {k: v for k, v in config.__dict__.items()},
        "training_hash": config.training_hash(),
        "init_adapter_sha256": (sha256_file(Path(config.init_adapter) / ADAPTER_WEIGHTS)
                                if config.init_adapter is not None else None),
        "data": _set_files(config.sets),
        "licences": dict(zip(config.sets, config.licences)),
        "exclude": _set_files(config.exclude),
        "excluded": _excluded_totals(counts),
        "counts": counts,
        "steps": state.step,
        "tokens": state.tokens,
        "train_seconds": round(state.seconds, 1),
        "tokens_per_second": round(state.tokens / max(state.seconds, 1e-9), 1),
        "machine": machine_description(),
        "python": sys.version.split()[0],
        "torch": __import__("torch").__version__,
        "commit": _git_commit(),
        "files": {p.name: sha256_file(p) for p in (gguf_path, peft_dir / "adapter_model.safetensors",
                                                      peft_dir / "adapter_config.json")},
        "evaluations": state.evaluations,
    }
    (out / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=1, default=str), encoding="utf-8")
    (out / "losses.json").write_text(json.dumps(state.losses), encoding="utf-8")
    write_report(out, provenance, state.losses)
    log.info("tuned judge written: %s", spec_path)
    return spec_path
