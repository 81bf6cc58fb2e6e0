"""What a bench measures: its judges, its sets and its settings, from the command line or a bench file.

A bench file is TOML, kept in a team's repository so that the same bench is rerun later::

    out = "runs/bench"
    sets = ["calibration/starter.jsonl", "wice:data/wice/dev.jsonl"]
    limit = 200

    [[judge]]
    model = "gemma-3-270m-judge"

    [[judge]]
    model = "openai:http://127.0.0.1:8000/v1#gemma-3-270m-judge"
    name = "served"                      # optional: how the tables name it (default: the model argument)

    [[judge]]
    model = "gemma-3-270m"
    backend = "transformers"

Relative set and model paths are read relative to the bench file's folder.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgelab.errors import DataError, ParameterError

__all__ = ["BenchSpec", "JudgeEntry", "read_bench_file", "safe_folder"]

#: The metrics a bench can rank by (higher is better for both).
RANK_METRICS = ("auroc", "balanced_accuracy")

_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")


def safe_folder(argument: str) -> str:
    """A filesystem-safe folder name for a judge or set argument, as given, that no other argument shares.

    Characters outside ``[A-Za-z0-9._=+-]`` become ``_`` (``openai:http://127.0.0.1:8000/v1#m`` ->
    ``openai_http_127.0.0.1_8000_v1_m``); when that changed anything, a short hash of the argument is
    appended (``-3f2a9c``), so two arguments that differ only in such characters never share a folder.
    """
    cleaned = _UNSAFE.sub("_", argument).strip("._") or "_"
    if cleaned == argument and len(cleaned) <= 120:
        return cleaned
    digest = hashlib.sha256(argument.encode("utf-8")).hexdigest()[:6]
    return f"{cleaned[:110]}-{digest}"


class JudgeEntry(BaseModel):
    """One judge of a bench: a model argument in any form ``load_model`` takes, and how to load it.

    ``model`` is an embedded id, a spec ``.toml``, a ``.gguf`` path, a Hugging Face id or folder (with
    ``backend = "transformers"``), or a remote short form (``openai:URL#NAME``, ``ollama:URL#NAME``).
    A command-line ``--model transformers:ID`` is the same as ``backend = "transformers"``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=1)
    name: str | None = None
    backend: Literal["llama_cpp", "transformers"] | None = None
    threads: int | None = Field(default=None, ge=1)

    @classmethod
    def parse(cls, argument: str) -> JudgeEntry:
        """The entry of a ``--model`` argument (``transformers:ID`` picks the transformers backend)."""
        if argument.startswith("transformers:"):
            return cls(model=argument.removeprefix("transformers:"), name=argument, backend="transformers")
        return cls(model=argument)

    @property
    def label(self) -> str:
        """How tables, figures and folders name this judge: ``name``, else the model argument as given."""
        return self.name or (f"transformers:{self.model}" if self.backend == "transformers" else self.model)

    @property
    def folder(self) -> str:
        return safe_folder(self.label)

    def load_options(self) -> dict[str, object]:
        options: dict[str, object] = {}
        if self.backend is not None:
            options["backend"] = self.backend
        if self.threads is not None:
            options["n_threads"] = self.threads
        return options


class BenchSpec(BaseModel):
    """A whole bench: judges x sets, where it writes, and how it measures.

    Attributes
    ----------
    judges, sets
        Every judge is scored on every set: each pair is a cell. A set is anything ``calibrate --set``
        takes (a JSONL file, ``KIND:PATH``, ``GENERATOR:SET``); ``"starter"`` is the project's starter set.
    out
        The bench folder (``cells/``, ``leaderboard.*``); rerunning into it resumes.
    task
        Keep only rows of these tasks (default: every task of every set).
    limit
        At most this many rows per set and task (whole units spread over the set, seeded by ``seed``).
    rank_by
        The metric the ranking and the paired differences use (``auroc`` or ``balanced_accuracy``).
    repeats, repeat_rows
        Rescore ``repeat_rows`` rows of each cell ``repeats`` more times (run-to-run stability); 0: off.
    baseline
        A judge (its name or model argument as the tables show it) every other judge is compared with: the paired
        difference per column and over sets, and whether it is admitted (worse beyond the interval nowhere, better on
        the mean over sets). For choosing a candidate over the judge that ships.
    n_resamples, seed
        Bootstrap resamples (shared by every judge) and the seed of the split, limit and bootstrap.
    batch_size
        Rows per evaluator call.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    judges: tuple[JudgeEntry, ...] = Field(alias="judge", min_length=1)
    sets: tuple[str, ...] = Field(min_length=1)
    out: str = "runs/bench"
    task: tuple[str, ...] = ()
    limit: int | None = Field(default=None, ge=1)
    rank_by: Literal["auroc", "balanced_accuracy"] = "auroc"
    repeats: int = Field(default=0, ge=0)
    repeat_rows: int = Field(default=20, ge=1)
    baseline: str | None = None
    n_resamples: int = Field(default=1000, ge=1)
    seed: int = 0
    batch_size: int = Field(default=8, ge=1)

    @field_validator("judges")
    @classmethod
    def _distinct_judges(cls, judges: tuple[JudgeEntry, ...]) -> tuple[JudgeEntry, ...]:
        seen: dict[str, str] = {}
        for j in judges:
            if j.folder in seen:
                raise ValueError(f"two judges are both named {j.label!r}; give one a distinct name")
            seen[j.folder] = j.label
        return judges

    @field_validator("sets")
    @classmethod
    def _distinct_sets(cls, sets: tuple[str, ...]) -> tuple[str, ...]:
        dupes = sorted({s for s in sets if sets.count(s) > 1})
        if dupes:
            raise ValueError(f"set {dupes[0]!r} is named twice")
        return sets

    @model_validator(mode="after")
    def _known_baseline(self) -> BenchSpec:
        names = [j.label for j in self.judges]
        if self.baseline is not None and self.baseline not in names:
            raise ValueError(f"baseline {self.baseline!r} is none of the judges ({', '.join(names)})")
        return self

    @classmethod
    def of(cls, models: Sequence[str], sets: Sequence[str], *, out: str = "runs/bench", limit: int | None = None,
           n_resamples: int = 1000, seed: int = 0) -> BenchSpec:
        """The spec of ``judgelab bench --model M ... --set S ...`` (other settings: ``checked`` or a bench file)."""
        return cls.checked({"judge": [JudgeEntry.parse(m).model_dump() for m in models], "sets": list(sets), "out": out,
                            "limit": limit, "n_resamples": n_resamples, "seed": seed})

    @classmethod
    def checked(cls, data: Mapping[str, object]) -> BenchSpec:
        """``model_validate`` whose error is one ``ParameterError`` naming the first bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ParameterError(f"judgelab bench: {_first_error(exc)}") from exc


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return (f"{where}: " if where else "") + str(err.get("msg", "")).removeprefix("Value error, ")


def _relative_to(base: Path, value: str) -> str:
    """A set or model argument with its path part read relative to ``base`` (``KIND:PATH`` keeps ``KIND:``)."""
    kind, sep, rest = value.rpartition(":")
    path_part = rest if sep and "://" not in value and "#" not in value else value
    prefix = value[: len(value) - len(path_part)]
    candidate = Path(path_part).expanduser()
    if path_part and not candidate.is_absolute() and (base / candidate).exists():
        return prefix + str(base / candidate)
    return value


def read_bench_file(path: str | Path) -> BenchSpec:
    """Read a bench file (TOML: ``sets``, ``[[judge]]`` tables and settings); errors name the file and field."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"Cannot read bench file {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"Bench file {path} is not valid TOML: {exc}.", path=str(path)) from exc
    base = path.parent
    data["sets"] = [_relative_to(base, str(s)) for s in data.get("sets", [])]
    judges = data.get("judge", [])
    if isinstance(judges, list):
        data["judge"] = [{**j, "model": _relative_to(base, str(j.get("model", "")))} if isinstance(j, dict) else j
                         for j in judges]
    if "out" in data and not Path(str(data["out"])).is_absolute():
        data["out"] = str(base / str(data["out"]))
    try:
        return BenchSpec.model_validate(data)
    except ValidationError as exc:
        raise DataError(f"Bench file {path}: {_first_error(exc)}. Fix the file (see docs/bench.md).",
                        path=str(path)) from exc
