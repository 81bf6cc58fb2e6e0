"""Whether this CPU multiplies bfloat16 natively: ``--autocast bf16`` is 2x faster there and 26x slower elsewhere.

Measured in docs/tuning.md ("Training speed"): on an AMD EPYC with ``avx512_bf16`` bf16 autocast trained at
2.1-2.2x float32's tokens/s; on one with AVX2 only, torch emulates bfloat16 and ran at 0.038x.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["NATIVE_BF16_FLAGS", "cpu_flags", "native_bf16"]

#: /proc/cpuinfo flags of the x86 instructions that multiply bfloat16 (AVX-512 BF16, Intel AMX).
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str] | None:
    """The first processor's ``flags`` in ``cpuinfo``; None where there is no such file (macOS, Windows)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return None


def native_bf16(flags: Iterable[str]) -> bool:
    """True when ``flags`` name an instruction set that multiplies bfloat16 in hardware."""
    return not NATIVE_BF16_FLAGS.isdisjoint(flags)
