"""Engine suite: random-playout throughput of each game's kernels, and env / vector env steps.

Each figure is measured for ``cfg.seconds`` after a warm-up that compiles (or loads) the kernels,
on one core. Playouts run in a numba loop so Python overhead is not measured.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ultimate_rl import games
from ultimate_rl.envs import BoardGameEnv, BoardGameVectorEnv
from ultimate_rl.games import kernels

VECTOR_BOARDS = 256


def measure(work: Callable[[int], None], seconds: float, batch: int) -> float:
    """Units of ``work`` per second: ``work(batch)`` runs (at least once) until ``seconds`` pass."""
    work(batch)  # warm-up: compile, fill caches
    done = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        work(batch)
        done += batch
    return done / elapsed


def playouts_per_s(name: str, seconds: float, guided: bool = False) -> float:
    """Random playouts (or the game's guided ones) per second from the start position."""
    state = games.make(name).initial_state()  # each game with its default options
    kernels.seed(0)
    return measure(lambda count: kernels.playouts(state, count, guided), seconds, batch=2000)


def env_steps_per_s(seconds: float) -> float:
    """Single uttt env, random legal agent moves, random opponent; counts ``step`` calls."""
    env = BoardGameEnv("uttt")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)

    def work(count: int) -> None:
        nonlocal obs
        for _ in range(count):
            obs, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            if terminated:
                obs, _ = env.reset()

    return measure(work, seconds, batch=200)


def vector_env_steps_per_s(seconds: float, boards: int = VECTOR_BOARDS) -> float:
    """uttt vector env of ``boards`` boards, random legal moves; counts board-steps."""
    env = BoardGameVectorEnv(boards, "uttt")
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)

    def work(count: int) -> None:
        nonlocal obs
        for _ in range(count // boards):
            legal_scores = rng.random(obs["action_mask"].shape) * obs["action_mask"]
            obs, *_ = env.step(legal_scores.argmax(axis=1))

    return measure(work, seconds, batch=20 * boards)


def run(cfg: Any) -> dict[str, float]:
    """The engine figures; ``cfg.seconds`` is the measuring time of each."""
    seconds = float(cfg.seconds)
    if seconds <= 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    figures = {}
    for name in games.GAMES:  # a game without a guided playout of its own plays random ones
        figures[f"{name}_random_playouts_per_s"] = playouts_per_s(name, seconds)
        figures[f"{name}_guided_playouts_per_s"] = playouts_per_s(name, seconds, guided=True)
    figures["uttt_env_steps_per_s"] = env_steps_per_s(seconds)
    figures["uttt_vector_env_steps_per_s"] = vector_env_steps_per_s(seconds)
    return figures
