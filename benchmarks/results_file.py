"""The one writer of a benchmark's results file: the figures, and what a reviewer needs to trace them.

Every file it writes carries the command that made it (absolute paths taken out), the commit and whether the
tree was dirty (results files under ``benchmarks/results/`` do not count: a benchmark that writes two files
would otherwise call its own second run dirty), the CPU model with the instruction-set flags that move scores
and speed (AVX2 / AVX-512 / AMX from ``/proc/cpuinfo``, and llama.cpp's own system info), the core count, and
the versions of the libraries that score. No absolute path survives: the repository root, the home folder and
any prefix the caller names are replaced by short labels, and what is left is cut to its last part.

    from results_file import write_results
    write_results(args.results, {"judgments": 240, ...}, scrub={args.data: "DATA"})
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

#: The instruction-set flags that change llama.cpp's kernels, and so a score's last digits and the speed.
SCORING_FLAGS = ("avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16")
#: The libraries whose versions a figure depends on (absent ones are left out).
LIBRARIES = ("judgelab", "llama_cpp_python", "numpy", "torch", "transformers", "peft", "ray")
#: Roots of absolute paths that name one machine's folders.
_ABSOLUTE = re.compile(r"(?<![\w.~])/(?:tmp|home|work|Users|root|mnt|var|data|opt|srv|check)/[^\s\"'`,;)]*")


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=repo, timeout=30, check=False)
    except OSError:
        return ""
    return done.stdout.strip()


def source_state(repo: Path = REPO) -> dict[str, Any]:
    """The commit and whether tracked or untracked files other than results files differ from it."""
    commit = _git(repo, "rev-parse", "HEAD") or None
    changed = _git(repo, "status", "--porcelain", "--", ".", ":(exclude)benchmarks/results")
    return {"commit": commit, "dirty": bool(changed) if commit else None}


def _cpuinfo(cpuinfo: Path) -> tuple[str | None, set[str]]:
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, set()
    model, flags = None, set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and model is None:
            model = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return model, flags


def llama_cpp_system_info() -> str | None:
    """llama.cpp's ``llama_print_system_info``: the CPU features its build uses (None without llama-cpp-python)."""
    try:
        import llama_cpp
    except ImportError:
        return None
    info = llama_cpp.llama_print_system_info()
    return (info.decode() if isinstance(info, bytes) else str(info)).strip()


def machine(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """The CPU model and its scoring flags, the cores this process may use, and llama.cpp's system info."""
    model, flags = _cpuinfo(cpuinfo)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 0
    return {"cpu": model or platform.processor() or "unknown",
            "cpu_flags": [f for f in SCORING_FLAGS if f in flags], "cores": cores,
            "llama_cpp_system_info": llama_cpp_system_info(),
            "platform": platform.platform(), "python": platform.python_version()}


def library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def scrub_paths(text: str, labels: Mapping[str | os.PathLike[str], str] | None = None, *, repo: Path = REPO) -> str:
    """``text`` with no absolute path: named prefixes become their labels, the repository root goes, the home
    folder becomes ``~``, and any other absolute path keeps only its last part (``…/name``)."""
    labels = labels or {}
    prefixes = {str(Path(p).resolve()): label for p, label in labels.items()}
    prefixes.update({str(Path(p)): label for p, label in labels.items()})
    prefixes.setdefault(str(repo), ".")
    for prefix in sorted(prefixes, key=len, reverse=True):  # the longest first: a data folder inside the repo
        label = prefixes[prefix]
        text = text.replace(prefix + "/", "" if label == "." else label + "/").replace(prefix, label)
    home = str(Path.home())
    if len(home) > 1:
        text = text.replace(home + "/", "~/")
    return _ABSOLUTE.sub(lambda m: "…/" + m.group(0).rstrip("/").rsplit("/", 1)[-1], text)


def shared_folder(paths: Sequence[str | os.PathLike[str]]) -> Path | None:
    """The folder the absolute paths among ``paths`` sit in together (None without one, or at ``/``).

    Pass it to ``write_results(scrub={folder: "LABEL"})`` when several inputs share a run folder: scrubbed
    one by one, ``/runs/a/judge.toml`` and ``/runs/b/judge.toml`` would both become ``…/judge.toml``.
    """
    folders = [Path(p).parent for p in paths if Path(p).is_absolute()]
    if not folders:
        return None
    shared = Path(os.path.commonpath(folders))
    return None if shared == Path(shared.anchor) else shared


def script_argv(script: str | os.PathLike[str], argv: Sequence[str] | None = None) -> list[str]:
    """What a results file records as its command: ``script`` (``__file__``) and ``argv``, or the process's arguments.

    ``main(argv)`` called from a test records the arguments it was given, not pytest's.
    """
    return [str(script), *(sys.argv[1:] if argv is None else argv)]


def command_line(argv: Sequence[str] | None = None) -> str:
    """How the benchmark was started: ``python benchmarks/NAME.py ARGS`` (paths made relative by the caller)."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0])
    try:
        script = script.resolve().relative_to(REPO)
    except ValueError:
        pass
    return " ".join(["python", str(script), *argv[1:]])


def provenance(argv: Sequence[str] | None = None, *, repo: Path = REPO) -> dict[str, Any]:
    """The fields every results file starts with."""
    return {"command": command_line(argv), **source_state(repo), "machine": machine(),
            "versions": library_versions()}


def write_results(path: str | os.PathLike[str], figures: Mapping[str, Any], *,
                  scrub: Mapping[str | os.PathLike[str], str] | None = None, argv: Sequence[str] | None = None,
                  repo: Path = REPO) -> Path:
    """Write ``{provenance..., **figures}`` as JSON to ``path``, every absolute path scrubbed; return the path.

    ``figures`` may not reuse a provenance key (a second "commit" would leave a reviewer two answers).
    """
    head = provenance(argv, repo=repo)
    clash = sorted(set(head) & set(figures))
    if clash:
        raise ValueError(f"results figures may not set {', '.join(clash)}: write_results records them itself")
    text = scrub_paths(json.dumps({**head, **figures}, indent=2, ensure_ascii=False), scrub, repo=repo)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n", encoding="utf-8")
    return out
