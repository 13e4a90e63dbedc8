"""Device and precision choice: CUDA when present, mixed precision only where it pays (CUDA)."""

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
    autocast is slower than float32 for nets this small.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {list(PRECISIONS)}")
    if precision == "fp32":
        return None
    if device.type != "cuda":
        if precision == "auto":
            return None
        raise ValueError(
            f"precision={precision!r} is for CUDA only (device is {device}); "
            "use precision='auto' or 'fp32'"
        )
    if precision == "auto":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if precision == "bf16" else torch.float16


def autocast(device: torch.device, dtype: torch.dtype | None) -> contextlib.AbstractContextManager:
    """Autocast to ``dtype`` on ``device``, or a no-op context for float32 (``dtype=None``).

    Training in fp16 also needs a ``torch.amp.GradScaler``; bf16 does not.
    """
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)
