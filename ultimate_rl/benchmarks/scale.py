"""Scale-out throughput: `python scripts/bench.py suite=scale` (not part of ``all``: it starts
worker processes and a Ray runtime).

Figures, for the ``scale.preset`` training preset's network and search (``uttt_cpu``):

- ``scale_<backend>_<n>_actors_positions_per_s``: moves per second that ``n`` streaming actors
  (1, 2 and every core) deliver to the learner, per backend, after each actor's first job
  (process start and kernel loading excluded); each actor has its own evaluator on
  ``scale.actor_device``;
- ``scale_processes_server_<n>_actors_positions_per_s`` (``scale.inference_server`` lists
  ``true``): the same through ONE inference server on ``scale.actor_device`` that every worker
  process feeds (``selfplay.inference_server=true``);
- ``scale_learner_samples_per_s`` (unless ``scale.learner=false``): positions per second
  through the optimiser on the best device;
- ``scale_<mode>_pipeline_positions_per_s`` (``scale.pipeline_iterations`` > 0): the whole
  training loop in ``train.mode=sync`` and ``async`` at the same replay ratio, positions played
  per second of training time.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from ultimate_rl.nn import resolve_device
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.train.config import RunConfig, check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.loop import train
from ultimate_rl.train.run import compose_train_config


def run(cfg: Any) -> dict[str, float]:
    """The figures above; ``cfg.seconds`` is each measurement's length."""
    scale = cfg.scale
    overrides = [f"experiment={scale.preset}", *scale.overrides]
    checked = check_config(compose_train_config(overrides))
    cores = os.cpu_count() or 1
    counts = sorted({n if n != "all" else cores for n in scale.actors})
    figures: dict[str, float] = {}
    for backend in scale.backends:
        servers = [s for s in scale.inference_server if backend == "processes" or not s]
        for server in servers:
            name = f"{backend}_server" if server else backend
            for n in counts:
                rate = actor_rate(checked, backend, n, scale, float(cfg.seconds), server)
                figures[f"scale_{name}_{n}_actors_positions_per_s"] = rate
    if scale.get("learner", True):
        figures["scale_learner_samples_per_s"] = learner_rate(checked, float(cfg.seconds))
    for mode in ("sync", "async") if scale.pipeline_iterations > 0 else ():
        figures[f"scale_{mode}_pipeline_positions_per_s"] = pipeline_rate(overrides, mode, scale)
    return figures


def actor_rate(
    run: RunConfig, backend: str, actors: int, scale: Any, seconds: float, server: bool = False
) -> float:
    """Moves per second from ``actors`` streaming actors, measured after their first jobs;
    ``server``: through one inference server instead of an evaluator per actor."""
    settings = dataclasses.replace(
        run.selfplay,
        workers=actors,
        backend=backend,
        parallel_games=scale.games_per_job,
        actor_device=scale.actor_device,
        inference_server=server,
    )
    model = Learner(run, torch.device("cpu")).model
    game_spec = {"name": run.game.name, "options": run.game_options}
    pool = SelfPlayPool(
        game_spec, model, run.search, settings, torch.device("cpu"), run.ray, streaming=True
    )
    try:
        pool.publish(0)
        pool.start(seed=0)
        warm = 0
        while warm < actors:  # every actor's first job: start-up and kernel loading
            warm += len(pool.poll(1.0))
        start, moves, jobs = time.perf_counter(), 0, 0
        while time.perf_counter() - start < seconds or jobs < actors:
            for result in pool.poll(1.0):
                moves += result.data.stats.moves
                jobs += 1
        return moves / (time.perf_counter() - start)
    finally:
        pool.close()


def learner_rate(run: RunConfig, seconds: float) -> float:
    """Optimiser samples per second on the best device, on random-play positions."""
    learner = Learner(run, resolve_device("auto"))
    settings = dataclasses.replace(run.selfplay, workers=1, backend="processes")
    game_spec = {"name": run.game.name, "options": run.game_options}
    pool = SelfPlayPool(game_spec, learner.model, run.search, settings, torch.device("cpu"))
    learner.add(pool.play(4, seed=0))
    learner.train_steps(2)  # warm-up
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < seconds or steps < 3:
        learner.train_steps(1)
        steps += 1
    if learner.device.type == "cuda":
        torch.cuda.synchronize()
    return steps * run.train.batch_size / (time.perf_counter() - start)


def pipeline_rate(overrides: list[str], mode: str, scale: Any) -> float:
    """Positions played per second of training time over a short run in ``mode``."""
    settings = [
        f"train.mode={mode}",
        f"train.iterations={scale.pipeline_iterations}",
        "train.max_minutes=null",
        "train.min_replay=1",
        "train.progress_bar=false",
        "train.probe_image_every=0",
        "eval.every=0",
        "eval.elo_every=0",
    ]
    with tempfile.TemporaryDirectory() as folder:
        summary = train(compose_train_config([*overrides, *settings]), Path(folder))
    return summary["positions"] / max(summary["minutes"] * 60, 1e-9)
