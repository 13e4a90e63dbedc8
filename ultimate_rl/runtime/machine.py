"""The machine a run trained on, as written into its ``summary.json``.

Equal wall-clock is a fair budget only on one machine: the same recipe made 7x fewer self-play
games a second on a 2-core AMD EPYC with AVX2 alone than on one with AVX512-VNNI (int8
inference), and an A/B that reuses runs trained in another session may have crossed machines
without a word. So each run records its CPU model, cores, the instruction sets that decide our
fast paths (int8 needs VNNI to pay, the bf16 learner AMX) and its GPU, and ``scripts/compare.py``
says when a pool's runs did not share one.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ISA_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile")
"""The CPU flags (as ``/proc/cpuinfo`` names them) that change which inference and learner
paths are fastest."""


@dataclass(frozen=True)
class Machine:
    """``cpu``: the model name; ``cores``: the logical cores this process may use; ``isa``: the
    ``ISA_FLAGS`` present; ``gpu``: the CUDA device's name, or empty."""

    cpu: str
    cores: int
    isa: tuple[str, ...]
    gpu: str = ""

    def label(self) -> str:
        """One line naming the machine, e.g. ``AMD EPYC, 2 cores, avx2 avx512f avx512_vnni``."""
        isa = " ".join(self.isa) or "no avx2"
        return f"{self.cpu}, {self.cores} cores, {isa}" + (f", {self.gpu}" if self.gpu else "")

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "isa": list(self.isa)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Machine:
        return cls(
            cpu=str(data["cpu"]),
            cores=int(data["cores"]),
            isa=tuple(data.get("isa", ())),
            gpu=str(data.get("gpu") or ""),
        )


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; elsewhere what ``platform`` knows)."""
    for line in _cpuinfo().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def this_machine() -> Machine:
    """The machine this process runs on."""
    flags: set[str] = set()
    for line in _cpuinfo().splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity else os.cpu_count() or 1
    return Machine(cpu_model(), cores, tuple(f for f in ISA_FLAGS if f in flags), _gpu())


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def _gpu() -> str:
    """The CUDA device's name where torch is loaded and sees one (a run's summary is written
    after training, so torch is loaded there; this module never imports it itself)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return str(torch.cuda.get_device_name(0))
    return ""
