"""The one list of games: everything else that names the games is derived from it.

Game ``NAME`` is two files, ``ultimate_rl/games/NAME.py`` (its ``Game`` subclass, exported as
``GAME``) and ``ultimate_rl/games/kernels/NAME.py`` (its numba rules kernels). From this list come
the kernel dispatch (``games.kernels.GAMES``), ``games.make`` and ``games.GAMES``, the gymnasium
env IDs, the Hydra ``game`` config group and the tests' parametrisation. A game's id (the value of
``state[layout.GAME]``) is its place in the list, so a new game is appended, never inserted.
"""

from __future__ import annotations

GAME_NAMES: tuple[str, ...] = ("uttt", "numerical_ttt", "tictactoe", "connect_four")


def game_id(name: str) -> int:
    """The id of game ``name``: its index in ``GAME_NAMES``."""
    if name not in GAME_NAMES:
        raise KeyError(f"game {name!r} is not in ultimate_rl.games.registry.GAME_NAMES")
    return GAME_NAMES.index(name)
