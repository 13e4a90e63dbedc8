"""ultimate_rl: AlphaZero-style training for board games, built first for Ultimate Tic-Tac-Toe."""

from __future__ import annotations

from ultimate_rl.runtime.numba_cache import use_source_keyed_cache

use_source_keyed_cache()  # before any kernel module is imported

from ultimate_rl import games  # noqa: E402
from ultimate_rl.envs import register_envs  # noqa: E402
from ultimate_rl.game_configs import register_game_configs  # noqa: E402

register_envs()
register_game_configs()  # Hydra's game=NAME options, before any script or test composes

__version__ = "0.1.0"
__all__ = ["__version__", "games", "load_agent"]


def __getattr__(name: str) -> object:
    """``ultimate_rl.load_agent`` loads on first use, so ``import ultimate_rl`` needs no torch."""
    if name == "load_agent":
        from ultimate_rl.loading import load_agent

        return load_agent
    raise AttributeError(f"module 'ultimate_rl' has no attribute {name!r}")
