"""The inference path an evaluator takes (``make_evaluator``): the one named, or for
``inference=auto`` on a CPU the fastest on this machine that passes the numerics rule, chosen by
measurement.

Each candidate path (``evaluator.PATHS``; bf16 only where oneDNN has bf16 kernels, the reduced
precisions only with positions of the game to check them on) is timed briefly on real positions
at the caller's batch size, the paths taking turns so that other load hits them alike. The
timings are kept in a small cache (in ``ULTIMATE_RL_CACHE_DIR``, default ``~/.cache/ultimate_rl``)
keyed by CPU model, library versions, thread count, network shape and batch size, so a second
start on the same machine skips them. The numerics are checked every time (they depend on the
weights): a reduced-precision path whose top moves or values stray from float32's
(``nn.numerics``) is passed over for the next fastest. The choice, its timings and numerics ride
on the evaluator (``evaluator.choice``) so runs can log why they took the path.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ultimate_rl.games.base import Game
from ultimate_rl.nn.device import resolve_device
from ultimate_rl.nn.evaluator import (
    BACKENDS,
    EVALUATORS,
    PATHS,
    PIN_ENV,
    NetworkEvaluator,
    OnnxInt8Evaluator,
    float32_outputs,
)
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.nn.numerics import Numerics, Probe, compare, probe_positions
from ultimate_rl.runtime.machine import cpu_model
from ultimate_rl.runtime.numba_cache import user_cache_root

TIMING_SECONDS = 0.1  # per path; about a second of start-up in all without the cache
CACHE_ENV = "ULTIMATE_RL_CACHE_DIR"
CACHE_FILE = "inference_paths.json"
REDUCED = ("torch_bf16", "onnxruntime_int8")  # the paths the numerics rule applies to
PATHS_VERSION = 3  # in the cache key: bump it when a path's code changes its speed


@dataclass(frozen=True)
class PathChoice:
    """Which path ``auto`` took and why: positions per second by path at ``batch_size`` and the
    numerics of the reduced-precision ones."""

    path: str
    batch_size: int
    positions_per_s: dict[str, float]
    numerics: dict[str, Numerics] = field(default_factory=dict)
    cached: bool = False

    def summary(self) -> str:
        """One line for a run's log: the path, then every candidate's speed and numerics."""
        parts = []
        for name, rate in sorted(self.positions_per_s.items(), key=lambda kv: -kv[1]):
            text = f"{name} {rate:,.0f}/s"
            if name in self.numerics:
                check = self.numerics[name]
                text += f" ({check.summary()}{'' if check.passes else '; fails the rule'})"
            parts.append(text)
        origin = "cached timings" if self.cached else "measured"
        return (
            f"inference: {self.path} (auto, fastest passing at batch {self.batch_size}, "
            f"{origin}): " + "; ".join(parts)
        )

    def as_dict(self) -> dict[str, float | str]:
        """Flat figures for TensorBoard's hparams and JSON records."""
        flat: dict[str, float | str] = {"path": self.path, "batch_size": self.batch_size}
        flat.update({f"positions_per_s_{k}": v for k, v in self.positions_per_s.items()})
        for name, check in self.numerics.items():
            flat[f"top_move_agreement_{name}"] = check.top_move_agreement
            flat[f"max_value_difference_{name}"] = check.max_value_difference
        return flat


def candidates(probe: Probe | None) -> list[str]:
    """The paths worth timing here: float32 always; bf16 where oneDNN runs it; the reduced
    precisions only with a probe to check them on."""
    paths = ["torch", "onnxruntime"]
    if probe is not None:
        if torch.ops.mkldnn._is_mkldnn_bf16_supported():
            paths.append("torch_bf16")
        paths.append("onnxruntime_int8")
    return paths


def choose_path(
    model: PolicyValueNet,
    probe: Probe | None,
    batch_size: int,
    *,
    max_batch: int | None = None,
    seconds: float = TIMING_SECONDS,
) -> NetworkEvaluator:
    """The evaluator of the fastest passing path at ``batch_size`` (module doc); CPU only."""
    names = candidates(probe)
    key = _cache_key(model, batch_size, names)
    rates = _read_cache().get(key)
    cached = rates is not None and set(rates) == set(names)
    evaluators: dict[str, NetworkEvaluator] = {}

    def build(name: str) -> NetworkEvaluator:
        if name not in evaluators:
            evaluators[name] = EVALUATORS[name](model, "cpu", max_batch=max_batch, probe=probe)
        return evaluators[name]

    if not cached:
        rates = time_paths({name: build(name) for name in names}, probe, model, batch_size, seconds)
        _write_cache(key, rates)
    numerics: dict[str, Numerics] = {}
    for name in sorted(names, key=lambda n: -rates[n]):
        evaluator = build(name)
        if name in REDUCED:
            numerics[name] = path_numerics(evaluator, probe, model)
            if not numerics[name].passes:
                continue
        evaluator.choice = PathChoice(name, batch_size, dict(rates), numerics, cached)
        return evaluator
    raise AssertionError("the float32 paths always pass")  # pragma: no cover


def make_evaluator(
    model: PolicyValueNet,
    device: str | torch.device = "auto",
    *,
    backend: str = "auto",
    precision: str = "auto",
    max_batch: int | None = None,
    game: Game | None = None,
    batch_size: int = 64,
    reduced: bool = True,
) -> NetworkEvaluator:
    """The search ``evaluate`` callable for ``model`` on one of ``PATHS``, or ``auto``: the
    fastest path at ``batch_size`` positions a call that passes the numerics rule on positions
    of ``game`` (the module doc; without ``game`` only the float32 paths are candidates), or
    the path ``ULTIMATE_RL_INFERENCE`` names. On CUDA, ``auto`` is torch (bf16 autocast).
    ``reduced=False``: ``auto`` (and ``precision=auto``) keep to float32, for a network whose
    moves were judged in float32 (``Checkpoint.judged_perfect``)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown inference backend {backend!r}; choose one of {list(BACKENDS)}")
    resolved = resolve_device(device)
    probe = probe_positions(game) if game is not None else None
    if backend == "auto" and resolved.type == "cpu" and os.environ.get(PIN_ENV):
        backend = os.environ[PIN_ENV]
        if backend not in PATHS:
            raise ValueError(f"{PIN_ENV}={backend!r} is not an inference path; use one of {PATHS}")
    if not reduced and precision == "auto":
        precision = "fp32"
    if backend == "auto" and resolved.type == "cpu":
        return choose_path(model, probe if reduced else None, batch_size, max_batch=max_batch)
    if backend == "auto":
        backend = "torch"
    return EVALUATORS[backend](
        model, resolved, precision=precision, max_batch=max_batch, probe=probe
    )


def path_numerics(evaluator: NetworkEvaluator, probe: Probe, model: PolicyValueNet) -> Numerics:
    """The path's outputs on the probe's check half against float32's; the int8 path reports
    the check its weight refresh made (a failed one has fallen back to float32)."""
    check = probe.half(1)
    got = evaluator(check.planes, check.masks)  # the int8 path refreshes, and checks, here
    if isinstance(evaluator, OnnxInt8Evaluator):
        return evaluator.numerics
    return compare(float32_outputs(model, check.planes), got, check.masks)


def time_paths(
    evaluators: dict[str, NetworkEvaluator],
    probe: Probe | None,
    model: PolicyValueNet,
    batch_size: int,
    seconds: float,
) -> dict[str, float]:
    """Positions per second of each evaluator at ``batch_size``, taking turns call by call: the
    batch over its median call, so that a hiccup of the machine (another process, a page fault)
    during a few calls cannot flip the choice that a run keeps, and the cache with it."""
    planes, masks = _batch(probe, model, batch_size)
    for evaluate in evaluators.values():
        for _ in range(3):
            evaluate(planes, masks)  # warm-up: sessions, kernels, weight refresh
    spent = dict.fromkeys(evaluators, 0.0)
    calls: dict[str, list[float]] = {name: [] for name in evaluators}
    while min(spent.values()) < seconds or min(map(len, calls.values())) < 5:
        for name, evaluate in evaluators.items():
            start = time.perf_counter()
            evaluate(planes, masks)
            calls[name].append(time.perf_counter() - start)
            spent[name] += calls[name][-1]
    return {name: batch_size / float(np.median(times)) for name, times in calls.items()}


def _batch(probe: Probe | None, model: PolicyValueNet, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``size`` positions: the probe's, repeated as needed, or random planes without one."""
    if probe is None:
        rng = np.random.default_rng(0)
        planes = (rng.random((size, *model.observation_shape)) < 0.3).astype(np.float32)
        return planes, np.ones((size, model.num_actions), bool)
    rows = np.arange(size) % len(probe.planes)
    return probe.planes[rows], probe.masks[rows]


# --- the timing cache ---------------------------------------------------------------------------


def cache_path() -> Path:
    return Path(os.environ.get(CACHE_ENV) or user_cache_root()) / CACHE_FILE


def _cache_key(model: PolicyValueNet, batch_size: int, names: list[str]) -> str:
    import onnxruntime

    return json.dumps(
        {
            "cpu": cpu_model(),
            "torch": torch.__version__,
            "onnxruntime": onnxruntime.__version__,
            "threads": torch.get_num_threads(),
            "model": model.config.to_dict(),
            "shape": [*model.observation_shape, model.num_actions],
            "batch": batch_size,
            "paths": sorted(names),
            "version": PATHS_VERSION,
        },
        sort_keys=True,
    )


def _read_cache() -> dict[str, dict[str, float]]:
    try:
        return json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return {}  # none yet, or damaged: measure again and rewrite it


def _write_cache(key: str, rates: dict[str, float]) -> None:
    """Adds ``key`` to the cache file atomically (temp file + rename); a cache that cannot be
    written only costs the next start its timings."""
    path = cache_path()
    entries = _read_cache()
    entries[key] = rates
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps(entries, indent=1))
        os.replace(temp, path)
    except OSError:
        pass
