"""A warm start from rollout-MCTS labels (uttt.ai's first stage): supervised, before self-play.

Positions from random openings are searched by UCT (random rollouts, no network); the visit
distribution is the policy target and the root value the value target. A network trained on
those alone already plays like a strong MCTS at a fraction of its cost per move; a run then
starts from it with ``train.init_from=PATH`` (``scripts/pretrain_uct.py`` writes the file).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from ultimate_rl.games import layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.positions import random_opening
from ultimate_rl.nn.checkpoint import save_checkpoint
from ultimate_rl.search.uct import UCT
from ultimate_rl.train.config import RunConfig
from ultimate_rl.train.learner import Learner


def uct_labels(
    game: Game,
    positions: int,
    simulations: int,
    max_plies: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``positions`` states after 0..``max_plies`` random moves, with UCT's visit distribution
    ``[N, A]`` and root value ``[N]`` (mover's view) after ``simulations`` simulations."""
    uct = UCT(num_simulations=simulations, seed=int(rng.integers(2**31)))
    states = np.zeros((positions, layout.STATE_LEN), layout.STATE_DTYPE)
    policies = np.zeros((positions, game.num_actions), np.float32)
    values = np.zeros(positions, np.float32)
    for i in range(positions):
        plies = int(rng.integers(max_plies + 1))
        states[i] = game.apply_sequence(random_opening(game, plies, rng, if_game_ends="stop"))
        result = uct.search(states[i])
        policies[i] = result.visit_counts / max(result.visit_counts.sum(), 1)
        values[i] = result.root_value
    return states, policies, values


def pretrain(
    run: RunConfig,
    labels: tuple[np.ndarray, np.ndarray, np.ndarray],
    steps: int,
    device: torch.device,
    log: Callable[[int, dict[str, float]], None] = lambda step, losses: None,
) -> Learner:
    """A learner whose network was trained ``steps`` optimiser steps on ``labels`` (the whole
    set in its replay window: give ``train.replay_window`` >= the number of positions)."""
    learner = Learner(run, device)
    states, policies, values = labels
    targets = {"policies": policies, "values": values, "full_search": True}
    extra = {"root_values": values, "opponent_policies": np.zeros_like(policies)}  # no reply
    learner.replay.add(
        states, {**targets, **{k: extra[k] for k in learner.replay.targets if k in extra}}
    )
    chunk = max(steps // 10, 1)
    for done in range(0, steps, chunk):
        log(done + chunk, learner.train_steps(min(chunk, steps - done)))
    return learner


def save_warm_start(learner: Learner, path: Path) -> Path:
    """The network as a training checkpoint that ``train.init_from`` reads."""
    run = learner.run
    return save_checkpoint(
        path,
        model=learner.model,
        model_config=run.model,
        game_name=run.game.name,
        game_options=run.game_options,
        step=learner.progress.step,
    )
