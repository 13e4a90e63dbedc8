"""The machine a run trained on: read from the CPU, written into summaries, read back."""

from __future__ import annotations

from ultimate_rl.runtime import machine
from ultimate_rl.runtime.machine import ISA_FLAGS, Machine, this_machine

CPUINFO = """processor\t: 0
model name\t: AMD EPYC 9R14
flags\t\t: fpu sse2 avx2 avx512f avx512_vnni avx512_bf16 sha_ni
"""


def test_the_machine_names_its_cpu_cores_and_fast_path_flags(monkeypatch):
    monkeypatch.setattr(machine, "_cpuinfo", lambda: CPUINFO)
    here = this_machine()
    assert here.cpu == "AMD EPYC 9R14" and here.cores >= 1
    assert here.isa == ("avx2", "avx512f", "avx512_vnni", "avx512_bf16")  # no amx_tile, no sha
    assert here.label().startswith("AMD EPYC 9R14, ")
    assert here.label().endswith(" cores, avx2 avx512f avx512_vnni avx512_bf16")


def test_a_cpu_without_the_flags_says_so_and_round_trips_through_json():
    old = Machine("Intel Atom", 2, ())
    assert old.label() == "Intel Atom, 2 cores, no avx2"
    assert Machine.from_dict(old.as_dict()) == old
    gpu = Machine("AMD EPYC", 16, ("avx2",), "NVIDIA H200")
    assert Machine.from_dict(gpu.as_dict()) == gpu and gpu.label().endswith(", NVIDIA H200")


def test_this_machine_reads_the_real_cpu():
    here = this_machine()
    assert here.cpu and here.cores >= 1 and set(here.isa) <= set(ISA_FLAGS)
