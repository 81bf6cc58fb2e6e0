"""Reading whether the CPU multiplies bfloat16 natively, from /proc/cpuinfo's flags."""

from __future__ import annotations

from judgelab.tuning import cpu_flags, native_bf16

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16 avx512_vnni
bogomips\t: 4800.00

processor\t: 1
flags\t\t: fpu sse2 avx2 fma
"""


def test_flags_of_the_first_processor(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO, encoding="utf-8")
    assert cpu_flags(path) == frozenset({"fpu", "sse2", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni"})


def test_no_cpuinfo_is_unknown(tmp_path):
    assert cpu_flags(tmp_path / "missing") is None
    (tmp_path / "noflags").write_text("processor\t: 0\n", encoding="utf-8")
    assert cpu_flags(tmp_path / "noflags") is None


def test_native_bf16():
    assert native_bf16({"avx2", "avx512f", "avx512_bf16"})
    assert native_bf16(["amx_tile", "amx_bf16"])
    assert not native_bf16({"avx2", "fma", "avx512f", "avx512_vnni"})  # AVX-512 without BF16: emulated
    assert not native_bf16(set())
