"""Gymnasium environments (and a vector env) for every game; PettingZoo versions in ``.pettingzoo``.

``register_envs()`` runs on ``import ultimate_rl``, so ``gymnasium.make(ENV_ID)`` and
``gymnasium.make_vec(ENV_ID, num_envs=N, vectorization_mode="vector_entry_point")`` work.
"""

from __future__ import annotations

import gymnasium as gym

from ultimate_rl.envs.board_env import BoardGameEnv
from ultimate_rl.envs.vector_env import BoardGameVectorEnv
from ultimate_rl.games import GAMES

ENV_IDS = {f"ultimate_rl/{cls.__name__}-v0": name for name, cls in GAMES.items()}
"""Env ID -> game name, one per game: ``ultimate_rl/<the game's class name>-v0``."""


def register_envs() -> None:
    """Registers the env IDs with gymnasium; calling it again does nothing."""
    for env_id, game in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point="ultimate_rl.envs.board_env:BoardGameEnv",
            vector_entry_point="ultimate_rl.envs.vector_env:BoardGameVectorEnv",
            kwargs={"game": game},
        )


__all__ = ["ENV_IDS", "BoardGameEnv", "BoardGameVectorEnv", "register_envs"]
