"""Rules only: the three games behind one small API (see ``Game``), plus exact solvers, seeded
position sets and random openings."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import (
    GameError,
    GameOverError,
    IllegalActionError,
    InvalidStateError,
    UnknownGameError,
    UnsolvableGameError,
)
from ultimate_rl.games.numerical_ttt import NumericalTicTacToe
from ultimate_rl.games.positions import random_opening, sample_positions
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.games.solver import is_solvable, solve
from ultimate_rl.games.tictactoe import TicTacToe
from ultimate_rl.games.uttt import UltimateTicTacToe

GAMES: dict[str, type[Game]] = {
    name: importlib.import_module(f"{__name__}.{name}").GAME for name in GAME_NAMES
}
"""Every game's class by name, in the registry's order."""


def make(name: str, **options: Any) -> Game:
    """Builds a game by name (one of ``GAMES``) with its options (tictactoe: ``size``, ``k``)."""
    if name not in GAMES:
        raise UnknownGameError(f"unknown game {name!r}; choose one of {sorted(GAMES)}")
    try:
        return GAMES[name](**options)
    except TypeError as err:
        raise UnknownGameError(f"bad option for game {name!r}: {err}") from None


def make_from_config(spec: str | Mapping[str, Any]) -> Game:
    """A game from its name or from a ``game`` config node (``{name: tictactoe, size: 4}``),
    as a run's ``config.yaml`` records it."""
    if isinstance(spec, str):
        return make(spec)
    options = dict(spec)
    return make(options.pop("name"), **options)


__all__ = [
    "GAMES",
    "Game",
    "GameError",
    "GameOverError",
    "IllegalActionError",
    "InvalidStateError",
    "NumericalTicTacToe",
    "TicTacToe",
    "UltimateTicTacToe",
    "UnknownGameError",
    "UnsolvableGameError",
    "is_solvable",
    "make",
    "make_from_config",
    "random_opening",
    "sample_positions",
    "solve",
]
