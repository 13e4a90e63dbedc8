"""The opponent an environment plays the agent against, built from the env's ``opponent=`` argument.

Every opponent is reduced to one callable ``(game, state, rng) -> action`` so the env has a single
code path; ``rng`` is the env's ``np_random``, which makes seeded episodes reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ultimate_rl.agents.base import Agent
from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import IllegalActionError

OpponentFn = Callable[[Game, np.ndarray, np.random.Generator], int]

OPPONENT_NAMES = ("random", "mcts")


def random_opponent(game: Game, state: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal move drawn from the env's generator."""
    legal = game.legal_actions(state)
    return int(legal[rng.integers(len(legal))])


class SearchOpponent:
    """The UCT baseline from ``ultimate_rl.agents``, rebuilt with a seed from the env's generator
    on every move so a seeded episode replays exactly, whatever the search does with its seed."""

    def __init__(self, options: Mapping[str, Any]) -> None:
        try:
            from ultimate_rl.agents import make as make_agent
        except ImportError as err:
            raise ImportError(
                'opponent="mcts" needs the search module (ultimate_rl.agents.make("uct")), which '
                f"is not available: {err}; use opponent='random', a callable or an agent instead"
            ) from err
        self._make_agent = make_agent
        self._options = dict(options)
        self._seeded = "seed" in self._options
        self._agent = make_agent("uct", **self._options)  # fails early on bad options

    def __call__(self, game: Game, state: np.ndarray, rng: np.random.Generator) -> int:
        seed = int(rng.integers(2**31 - 1))  # drawn always, so the env's stream does not shift
        agent = self._agent if self._seeded else self._make_agent("uct", **self._options, seed=seed)
        return int(agent.select_action(game, state.copy()))


def make_opponent(opponent: object, options: Mapping[str, Any] | None) -> OpponentFn | None:
    """Turns the env's ``opponent=`` argument into one callable (None: self-play, no opponent)."""
    if options and opponent != "mcts":
        raise ValueError(f"opponent_options are only used with opponent='mcts', got {opponent!r}")
    if opponent is None:
        return None
    if opponent == "random":
        return random_opponent
    if opponent == "mcts":
        return SearchOpponent(options or {})
    if isinstance(opponent, Agent):
        agent = opponent
        return lambda game, state, rng: int(agent.select_action(game, state.copy()))
    if callable(opponent):
        fn = opponent
        return lambda game, state, rng: int(fn(game, state.copy()))
    raise ValueError(
        f"unknown opponent {opponent!r}; use one of {list(OPPONENT_NAMES)}, None (self-play), "
        "a callable (game, state) -> action, or an object with select_action(game, state)"
    )


def checked_move(
    fn: OpponentFn, game: Game, state: np.ndarray, legal: np.ndarray, rng: np.random.Generator
) -> int:
    """The opponent's move, refused with a clear error unless ``legal`` (the mask) allows it."""
    action = fn(game, state, rng)
    if not 0 <= action < game.num_actions or not legal[action]:
        raise IllegalActionError(action, np.flatnonzero(legal), "chosen by the env's opponent")
    return action
