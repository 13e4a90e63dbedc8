"""The Hydra ``game`` config group, derived from the list of games (no YAML file per game).

``register_game_configs()`` stores one option per game of ``games.GAMES``: the game's name and
its constructor's options with their defaults (``game=tictactoe`` gives ``size: 3, k: 3``).
``import ultimate_rl`` calls it (as it registers the env IDs), so whatever composes a config
finds ``game=NAME`` for a game as soon as it is in the registry.
"""

from __future__ import annotations

import inspect
from typing import Any

from hydra.core.config_store import ConfigStore

from ultimate_rl.games import GAMES


def game_parameters(name: str) -> list[inspect.Parameter]:
    """The options of game ``name``: its constructor's parameters (``size``, ``k``)."""
    return list(inspect.signature(GAMES[name].__init__).parameters.values())[1:]


def game_node(name: str) -> dict[str, Any]:
    """``{"name": name, option: default, ...}``: the ``game`` node of ``game=name``."""
    params = game_parameters(name)
    return {"name": name, **{p.name: p.default for p in params if p.default is not p.empty}}


def register_game_configs() -> None:
    """Stores every game as an option of the ``game`` group; calling it again does nothing new."""
    store = ConfigStore.instance()
    for name in GAMES:
        store.store(group="game", name=name, node=game_node(name))
