"""The one game loop under every match: training's batched evaluation and gating, and the arena.

Two players play many games in lockstep: each turn, a player gets every position where it is to
move in ONE call, so a network player searches or evaluates all of them in a batch, while an
``Agent`` joins through ``one_by_one``. Which openings a match starts from and who plays first in
which game is the caller's (training and the arena pair them differently, and their seeded
results depend on it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ultimate_rl.agents.base import Agent
from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import IllegalActionError

BatchPlayer = Callable[[np.ndarray], np.ndarray]  # positions [N, STATE_LEN] -> one move per row


class IllegalMoveError(IllegalActionError):
    """A player's move that the rules refuse, naming the player and the game."""

    def __init__(self, player: str, game_index: int, action: int, legal: list[int]) -> None:
        self.player = player
        self.game_index = game_index
        super().__init__(action, legal, f"played by {player!r} in game {game_index}")


@dataclass(frozen=True)
class PlayedGames:
    """Every game's moves, the seconds each took and the result (+1/0/-1 for the first player).

    A move chosen in a batch is charged the batch's time divided by its size."""

    moves: list[list[int]]
    seconds: list[list[float]]
    results: list[float]


def one_by_one(game: Game, agent: Agent) -> BatchPlayer:
    """``agent`` as a batch player: it chooses each position's move in turn."""

    def choose(states: np.ndarray) -> np.ndarray:
        return np.array([int(agent.select_action(game, s.copy())) for s in states], np.int64)

    return choose


def play_games(
    game: Game,
    players: tuple[BatchPlayer, BatchPlayer],
    starts: Sequence[np.ndarray],
    sides: np.ndarray,
    names: tuple[str, str] = ("A", "B"),
) -> PlayedGames:
    """Plays each game from ``starts[i]`` to the end; ``players[0]`` moves as player
    ``sides[i]`` (0 first, 1 second) of game ``i``, ``players[1]`` as the other one.

    Each round, ``players[0]`` moves in every game where it is to move, then ``players[1]``:
    a player that draws from a random stream sees the games in this fixed order. An illegal move
    raises ``IllegalMoveError`` naming the player by ``names``.
    """
    states = [np.array(s, copy=True) for s in starts]
    moves: list[list[int]] = [[] for _ in states]
    seconds: list[list[float]] = [[] for _ in states]
    sides = np.asarray(sides)
    ongoing = [not game.is_terminal(s) for s in states]
    while any(ongoing):
        for k, (player, name) in enumerate(zip(players, names, strict=True)):
            turn = [
                i
                for i, s in enumerate(states)
                if ongoing[i] and game.current_player(s) == sides[i] ^ k
            ]
            if not turn:
                continue
            start = time.perf_counter()
            actions = player(np.stack([states[i] for i in turn]))
            each = (time.perf_counter() - start) / len(turn)
            for i, action in zip(turn, actions, strict=True):
                try:
                    states[i] = game.apply(states[i], int(action))
                except IllegalActionError as err:
                    raise IllegalMoveError(name, i, int(action), err.legal_actions) from None
                moves[i].append(int(action))
                seconds[i].append(each)
                ongoing[i] = not game.is_terminal(states[i])
    return PlayedGames(moves, seconds, [game.returns(s) for s in states])
