"""Search benchmark suite: UCT and batched PUCT/Gumbel throughput on UTTT, and the share of
wall time the search costs next to a small network.

Figures (measured after a warm-up that compiles the kernels, one core):
- ``uct_simulations_per_s``: UCT, start position, one move of 10,000 simulations;
- ``puct_simulations_per_s`` / ``gumbel_simulations_per_s``: 256 games searched together from the
  start position, 200 simulations a move, with a zero-cost evaluator (uniform logits, zero values),
  summed over the batch;
- ``puct_overhead_fraction_small_net``: share of wall time spent outside ``evaluate`` when it is a
  4-block, 32-channel torch ResNet on the CPU (one thread).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ultimate_rl.games import make
from ultimate_rl.games.base import Game
from ultimate_rl.search import BatchedSearch, Evaluator, SearchConfig
from ultimate_rl.search.uct import UCT

UCT_SIMULATIONS = 10_000
BATCH = 256
SIMULATIONS_PER_MOVE = 200


def _uniform_evaluator(num_actions: int) -> Evaluator:
    """Zero-cost evaluator: uniform logits and zero values, from preallocated arrays."""
    logits = np.zeros((BATCH * 4, num_actions), np.float32)
    values = np.zeros(BATCH * 4, np.float32)

    def evaluate(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return logits[: len(masks)], values[: len(masks)]

    return evaluate


def _repeat(seconds: float, run: Any) -> float:
    """Calls ``run() -> work units`` until ``seconds`` have passed; returns units per second."""
    units, start = 0, time.perf_counter()
    while True:
        units += run()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return units / elapsed


def uct_rate(game: Game, seconds: float) -> float:
    uct = UCT(num_simulations=UCT_SIMULATIONS, seed=0)
    start = game.initial_state()
    uct.search(start)  # warm-up: compiles the kernel
    return _repeat(seconds, lambda: uct.search(start).simulations)


def batched_rate(game: Game, algorithm: str, seconds: float, evaluate: Evaluator) -> float:
    """Simulations per second of one move searched for ``BATCH`` games at the start position."""
    config = SearchConfig(algorithm=algorithm, num_simulations=SIMULATIONS_PER_MOVE)
    searcher = BatchedSearch(game, BATCH, config, seed=0)
    states = np.tile(game.initial_state(), (BATCH, 1))

    def one_move() -> int:
        for i in range(BATCH):
            searcher.reset(i)
        searcher.search(states, evaluate, add_noise=True)
        return BATCH * SIMULATIONS_PER_MOVE

    searcher.search(states[:2], evaluate, add_noise=True, num_simulations=4)  # warm-up
    return _repeat(seconds, one_move)


def _small_resnet_evaluator(game: Game) -> tuple[Evaluator, list[float]]:
    """A 4 x 32 residual network on the CPU; returns the evaluator and its running time."""
    import torch
    from torch import nn

    torch.set_num_threads(1)
    channels, height, width = game.observation_shape

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(32)
            self.conv2 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(32)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(x + self.bn2(self.conv2(y)))

    stem = nn.Sequential(nn.Conv2d(channels, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU())
    trunk = nn.Sequential(stem, *(Block() for _ in range(4))).eval()
    policy_head = nn.Linear(32 * height * width, game.num_actions)
    value_head = nn.Linear(32 * height * width, 1)
    spent = [0.0]

    def evaluate(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = time.perf_counter()
        with torch.no_grad():
            features = trunk(torch.from_numpy(planes)).flatten(1)
            logits = policy_head(features).numpy()
            values = torch.tanh(value_head(features)).squeeze(1).numpy()
        spent[0] += time.perf_counter() - start
        return logits, values

    return evaluate, spent


def overhead_fraction(game: Game, seconds: float) -> float:
    evaluate, spent = _small_resnet_evaluator(game)
    config = SearchConfig(num_simulations=SIMULATIONS_PER_MOVE)
    searcher = BatchedSearch(game, BATCH, config, seed=0)
    states = np.tile(game.initial_state(), (BATCH, 1))
    searcher.search(states[:2], evaluate, add_noise=True, num_simulations=4)  # warm-up
    for i in range(BATCH):
        searcher.reset(i)
    spent[0] = 0.0
    start = time.perf_counter()
    simulations = 0
    while time.perf_counter() - start < seconds or simulations == 0:
        searcher.search(states, evaluate, add_noise=True, num_simulations=8)
        simulations += 8
    total = time.perf_counter() - start
    return (total - spent[0]) / total


def run(cfg: Any) -> dict[str, float]:
    """The search suite's figures; ``cfg.seconds`` is how long each throughput is measured."""
    seconds = float(getattr(cfg, "seconds", 2.0))
    game = make("uttt")
    zero_cost = _uniform_evaluator(game.num_actions)
    return {
        "uct_simulations_per_s": uct_rate(game, seconds),
        "puct_simulations_per_s": batched_rate(game, "puct", seconds, zero_cost),
        "gumbel_simulations_per_s": batched_rate(game, "gumbel", seconds, zero_cost),
        "puct_overhead_fraction_small_net": overhead_fraction(game, seconds),
    }
