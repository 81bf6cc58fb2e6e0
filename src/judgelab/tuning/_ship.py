"""Ship a tuned judge under a models folder: its adapters, a spec with relative paths, provenance."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from judgelab.errors import JudgelabError
from judgelab.specs import ModelSpec, load_spec

__all__ = ["ship_adapter"]


def _half_safetensors(src: Path, dst: Path) -> None:
    from safetensors.numpy import load_file, save_file

    save_file({k: v.astype("float16") for k, v in load_file(str(src)).items()}, str(dst))


#: Fields of a run's spec that ``write_spec`` writes anew from the base, not copied: the rest ship as run.
_NOT_INHERITED = frozenset({"id", "description", "licence", "adapter", "source_path"})


def ship_adapter(run: str | Path, models: str | Path, *, half: bool = True) -> Path:
    """Copy a finished run's adapter into ``models/<id>/`` and write ``models/<id>.toml``.

    Parameters
    ----------
    run
        A ``tune`` output folder (with ``judge.toml``, ``peft/``, ``PROVENANCE.json``).
    models
        The models folder (``models/`` of the repository, or a folder on
        ``JUDGELAB_MODELS_PATH``).
    half
        Store the adapter weights as float16 (half the size; both formats
        are written from the same rounded values, so the backends still agree).

    Returns
    -------
    Path
        The shipped spec file.
    """
    from judgelab.tuning._gguf import export_gguf_adapter
    from judgelab.tuning._output import PROVENANCE_FILE, SPEC_FILE, write_spec
    from judgelab.weights import sha256_file

    run, models = Path(run), Path(models)
    if not (run / SPEC_FILE).is_file():
        raise JudgelabError(f"{run} holds no finished tuning run (no {SPEC_FILE}); finish it with the same command.")
    tuned = load_spec(run / SPEC_FILE)
    if tuned.adapter is None or tuned.adapter.base is None:
        raise JudgelabError(f"{run / SPEC_FILE} names no [adapter] base; finish the run with the same command.")
    # The run's spec is what was measured: its fields (chunk size, a [tasks] prompt it was trained with, as
    # train_default_judge.py --judge-relevancy-prompt gives it) ship, over the base's, with the new files.
    kept = {name: getattr(tuned, name) for name in type(tuned).model_fields if name not in _NOT_INHERITED}
    base = load_spec(tuned.adapter.base).model_copy(update=kept)
    folder = models / tuned.id
    terms = _gemma_terms(folder) if base.family == "gemma" else None  # read before the old folder goes
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "peft").mkdir(parents=True)
    shutil.copy2(run / "peft" / "adapter_config.json", folder / "peft" / "adapter_config.json")
    if half:
        _half_safetensors(run / "peft" / "adapter_model.safetensors", folder / "peft" / "adapter_model.safetensors")
    else:
        shutil.copy2(run / "peft" / "adapter_model.safetensors", folder / "peft" / "adapter_model.safetensors")
    provenance = json.loads((run / PROVENANCE_FILE).read_text(encoding="utf-8"))
    n_layers = int(provenance.get("n_layers") or _layers(run))
    gguf = export_gguf_adapter(folder / "peft", folder / "adapter.gguf", arch=_arch(run), n_layers=n_layers,
                               name=tuned.id, half=half)
    spec = write_spec(base, tuned.id, folder, folder / "peft", gguf)
    data = tomllib.loads(spec.read_text(encoding="utf-8"))
    for key in ("gguf", "peft"):
        data["adapter"][key] = f"{tuned.id}/{data['adapter'][key]}"
    from judgelab.tuning._toml import dump_toml

    header = "\n".join(ln[2:] for ln in spec.read_text(encoding="utf-8").splitlines() if ln.startswith("# "))
    text = dump_toml(data, header=header + "\nThe embedded default judge: see models/" + tuned.id + "/PROVENANCE.json.")
    ModelSpec(**tomllib.loads(text))
    target = models / f"{tuned.id}.toml"
    target.write_text(text, encoding="utf-8")
    spec.unlink()
    provenance["shipped"] = {"half": half, "files": {
        "adapter.gguf": sha256_file(gguf),
        "peft/adapter_model.safetensors": sha256_file(folder / "peft" / "adapter_model.safetensors"),
        "peft/adapter_config.json": sha256_file(folder / "peft" / "adapter_config.json"),
    }}
    (folder / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=1, default=str), encoding="utf-8")
    for extra in ("report.md", "loss.png"):
        if (run / extra).is_file():
            shutil.copy2(run / extra, folder / extra)
    if terms is not None:
        (folder / GEMMA_TERMS).write_text(terms, encoding="utf-8")
    _write_notice(folder, tuned.id, base)
    return target


#: The Gemma Terms of Use as text, beside a shipped Gemma derivative (their Section 3.1 asks for a copy).
GEMMA_TERMS = "GEMMA_TERMS.txt"


def _gemma_terms(folder: Path) -> str:
    """The Gemma Terms' text to ship beside the adapter: the folder's own copy, else a packaged judge's."""
    from judgelab.specs import spec_dirs

    for candidate in (folder / GEMMA_TERMS, *(d / sub.name / GEMMA_TERMS for d in spec_dirs()
                                              for sub in sorted(d.iterdir()) if sub.is_dir())):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise JudgelabError(f"Shipping a Gemma derivative needs a copy of the Gemma Terms of Use beside it (their "
                        f"Section 3.1): put their text (ai.google.dev/gemma/terms) in {folder / GEMMA_TERMS} "
                        "and ship again.")


def _write_notice(folder: Path, name: str, base: ModelSpec) -> None:
    """``NOTICE`` beside the adapter: whose derivative it is and under which terms it is shipped."""
    lines = [f"{name}: a LoRA adapter trained by judgelab tune on {base.id}.", "",
             f"It is a derivative of {base.id}, and is distributed under that model's terms:",
             f"  {base.licence or 'no licence is named in the base spec: check it before shipping this adapter'}", ""]
    if base.family == "gemma":
        lines += ["Gemma is provided under and subject to the Gemma Terms of Use found at ai.google.dev/gemma/terms",
                  "(and the Gemma Prohibited Use Policy, ai.google.dev/gemma/prohibited_use_policy).", "",
                  f"A copy of the Gemma Terms of Use is in {GEMMA_TERMS}, beside this file.", ""]
    lines += ["PROVENANCE.json lists the data it was trained on, with each source's licence."]
    (folder / "NOTICE").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _arch(run: Path) -> str:
    from judgelab.engine import gguf_metadata

    return str(gguf_metadata(run / "adapter.gguf")["general.architecture"])


def _layers(run: Path) -> int:
    config = json.loads((run / "peft" / "adapter_config.json").read_text(encoding="utf-8"))
    if config.get("layers_to_transform"):
        last: int = max(config["layers_to_transform"])
        return last + 1
    raise JudgelabError(f"{run}: cannot tell the base model's layer count from its adapter config.")
