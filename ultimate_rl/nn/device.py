"""Device and precision choice: CUDA when present, mixed precision only where it pays (CUDA
for inference and training; CPUs with AMX for training)."""

from __future__ import annotations

import contextlib

import torch

PRECISIONS: tuple[str, ...] = ("auto", "fp32", "bf16", "fp16")


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``auto`` -> ``cuda`` if available, else ``cpu``; anything else is checked, not guessed."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except RuntimeError as err:
        raise ValueError(
            f"unknown device {device!r} ({err}); use 'auto', 'cpu', 'cuda' or 'cuda:N'"
        ) from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r} asked for, but CUDA is not available here; "
            "use device='auto' or 'cpu'"
        )
    return resolved


def resolve_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype for ``precision`` on ``device``; ``None`` means plain float32.

    ``auto`` picks bf16 on CUDA GPUs that support it (else fp16) and float32 on the CPU, where
    inference of nets this small gains little from it. bf16 runs on the CPU too (see
    ``training_precision``); fp16 is CUDA only.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {list(PRECISIONS)}")
    if precision == "fp32":
        return None
    if device.type != "cuda":
        if precision == "auto":
            return None
        if precision == "bf16":
            return torch.bfloat16
        raise ValueError(
            f"precision={precision!r} is for CUDA only (device is {device}); "
            "use precision='auto', 'bf16' or 'fp32'"
        )
    if precision == "auto":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if precision == "bf16" else torch.float16


def cpu_has_amx() -> bool:
    """Whether this CPU has AMX tiles (bf16 matrix units: Intel Sapphire Rapids and later)."""
    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(probe and probe())


def training_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """The learner's autocast dtype: ``resolve_precision``, except that ``auto`` trains in bf16
    on a CPU with AMX, where a small ResNet's optimiser step runs ~1.5x faster than in float32
    (``scripts/bench.py suite=train`` measures it on your machine)."""
    if precision == "auto" and device.type == "cpu" and cpu_has_amx():
        return torch.bfloat16
    return resolve_precision(precision, device)


def autocast(device: torch.device, dtype: torch.dtype | None) -> contextlib.AbstractContextManager:
    """Autocast to ``dtype`` on ``device``, or a no-op context for float32 (``dtype=None``).

    Training in fp16 also needs a ``torch.amp.GradScaler``; bf16 does not.
    """
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)
