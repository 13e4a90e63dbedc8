"""Game-agnostic numba kernels: one entry point per operation, dispatching on ``state[GAME]``.

Search, self-play and the environments call these, so a single compiled search kernel serves
every game. ``GAMES`` holds the kernels of every game of ``games.registry.GAME_NAMES``, in that
order; each game module under this package (named after its game) provides the same four kernels
and its ``GAME_ID``:

- ``legal_mask(state, mask) -> int``: writes ``mask[:num_actions]`` (uint8 0/1), returns the count.
- ``apply(state, action)``: plays a LEGAL action in place and updates the whole header
  (PLAYER, STATUS, MOVES, LAST). Legality is the caller's job (the Python ``Game`` checks it).
- ``encode(state, planes)``: writes the float32 network planes (C, H, W), mover's point of view.
- ``num_actions(state) -> int``.

A game module may also provide ``random_playout(state) -> float``, a fast path for the UCT
baseline's hot loop (``uttt`` has a bitboard one; the others use the generic one here), and
``guided_playout(state) -> float``, its own stronger playout policy for the network search's
mixed leaf values (``search.rollout_policy=guided``; without one, the random playout), and
``dead_draw(state) -> bool``, whether an unfinished game can only end drawn (the search's
``contempt`` ends descents there; without one, never).
Adding a game's kernels is a module like these; nothing here names a game.

All of them take a 1-D int32 state of ``layout.STATE_LEN`` entries.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import NamedTuple

import numpy as np
from numba import literal_unroll, njit
from numba.core.registry import CPUDispatcher

from ultimate_rl.games import layout
from ultimate_rl.games.registry import GAME_NAMES


class GameKernels(NamedTuple):
    """One game's kernels, keyed by its ``state[GAME]`` id."""

    game_id: int
    num_actions: CPUDispatcher
    legal_mask: CPUDispatcher
    apply: CPUDispatcher
    encode: CPUDispatcher
    random_playout: CPUDispatcher
    guided_playout: CPUDispatcher
    dead_draw: CPUDispatcher


@njit(cache=True)
def num_actions(state: np.ndarray) -> int:
    count = 0
    for game in literal_unroll(GAMES):
        if state[layout.GAME] == game.game_id:
            count = game.num_actions(state)
    return count


@njit(cache=True)
def legal_mask(state: np.ndarray, mask: np.ndarray) -> int:
    count = 0
    for game in literal_unroll(GAMES):
        if state[layout.GAME] == game.game_id:
            count = game.legal_mask(state, mask)
    return count


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    for game in literal_unroll(GAMES):
        if state[layout.GAME] == game.game_id:
            game.apply(state, action)


@njit(cache=True)
def encode(state: np.ndarray, planes: np.ndarray) -> None:
    for game in literal_unroll(GAMES):
        if state[layout.GAME] == game.game_id:
            game.encode(state, planes)


@njit(cache=True)
def random_playout(state: np.ndarray) -> float:
    """Plays uniformly random moves from a COPY of ``state``; returns the first player's result."""
    result = 0.0
    for game in literal_unroll(GAMES):
        if state[layout.GAME] == game.game_id:
            result = game.random_playout(state)
    return result


@njit(cache=True)
def guided_playout(state: np.ndarray) -> float:
    """The game's own playout policy from a COPY of ``state`` (its random playout where it has
    none); returns the first player's result."""
    result = 0.0
    for game in literal_unroll(GAMES):
        if state[layout.GAME] == game.game_id:
            result = game.guided_playout(state)
    return result


@njit(cache=True)
def dead_draw(state: np.ndarray) -> bool:
    """Whether the unfinished game of ``state`` can only end drawn, as far as its game can tell
    cheaply (False where it has no ``dead_draw`` of its own)."""
    dead = False
    for game in literal_unroll(GAMES):
        if state[layout.GAME] == game.game_id:
            dead = game.dead_draw(state)
    return dead


@njit(cache=True)
def _never_dead(state: np.ndarray) -> bool:
    """The ``dead_draw`` of a game that cannot tell a draw before the end."""
    return False


@njit(cache=True)
def playouts(state: np.ndarray, count: int, guided: bool) -> float:
    """The summed first-player result of ``count`` playouts from ``state``: random ones, or the
    game's guided ones."""
    total = 0.0
    for _ in range(count):
        total += guided_playout(state) if guided else random_playout(state)
    return total


@njit(cache=True)
def _any_game_random_playout(state: np.ndarray) -> float:
    """The random playout of a game without a fast path of its own."""
    s = state.copy()
    mask = np.empty(layout.MAX_ACTIONS, dtype=np.uint8)
    while s[layout.STATUS] == layout.ONGOING:
        apply(s, random_action(s, mask))
    return outcome(s)


def _kernels(name: str) -> GameKernels:
    """Game ``name``'s kernels; one without its own ``random_playout`` gets the generic one, its
    random playout stands in for a ``guided_playout`` it lacks, and one without ``dead_draw``
    never tells a draw early."""
    module: ModuleType = importlib.import_module(f"{__name__}.{name}")
    playout = getattr(module, "random_playout", _any_game_random_playout)
    guided = getattr(module, "guided_playout", playout)
    dead = getattr(module, "dead_draw", _never_dead)
    return GameKernels(
        module.GAME_ID,
        module.num_actions,
        module.legal_mask,
        module.apply,
        module.encode,
        playout,
        guided,
        dead,
    )


GAMES = tuple(_kernels(name) for name in GAME_NAMES)
"""Every game's kernels, derived from the registry: the kernels above reach a state's game through
this table, which numba unrolls at compile time into one direct call per game."""


@njit(cache=True)
def encode_batch(states: np.ndarray, planes: np.ndarray, masks: np.ndarray) -> None:
    """Planes and bool legal masks of many states (rows), so callers need no Python loop.

    ``planes`` [N, C, H, W] float32 and ``masks`` [N, A] bool are overwritten.
    """
    scratch = np.zeros(layout.MAX_ACTIONS, dtype=np.uint8)
    for i in range(states.shape[0]):
        planes[i] = 0.0
        encode(states[i], planes[i])
        legal_mask(states[i], scratch)
        for a in range(masks.shape[1]):
            masks[i, a] = scratch[a] != 0


@njit(cache=True)
def is_terminal(state: np.ndarray) -> bool:
    return state[layout.STATUS] != layout.ONGOING


@njit(cache=True)
def outcome(state: np.ndarray) -> float:
    """+1 / -1 / 0 from the first player's point of view (0 also while the game goes on)."""
    s = state[layout.STATUS]
    if s == layout.FIRST_WON:
        return 1.0
    if s == layout.SECOND_WON:
        return -1.0
    return 0.0


@njit(cache=True)
def seed(value: int) -> None:
    """Seed numba's own random generator (separate from numpy's) used by the playout kernels."""
    np.random.seed(value)


@njit(cache=True)
def random_action(state: np.ndarray, mask: np.ndarray) -> int:
    """A uniformly random legal action; ``mask`` is scratch space of MAX_ACTIONS entries."""
    n = legal_mask(state, mask)
    pick = np.random.randint(n)
    for a in range(num_actions(state)):
        if mask[a]:
            if pick == 0:
                return a
            pick -= 1
    return -1


@njit(cache=True)
def perft(state: np.ndarray, depth: int) -> int:
    """Number of move sequences of length ``depth`` from ``state`` (games that end sooner count 0).

    The standard move-generator check: iterative depth-first search with one state and one legal
    mask per level, counting the last level's moves without playing them.
    """
    if depth <= 0:
        return 1
    n = num_actions(state)
    states = np.empty((depth, layout.STATE_LEN), dtype=state.dtype)
    masks = np.zeros((depth, layout.MAX_ACTIONS), dtype=np.uint8)
    next_action = np.zeros(depth, dtype=np.int64)
    states[0] = state
    count = legal_mask(states[0], masks[0])
    if depth == 1:
        return count
    total = 0
    level = 0
    while level >= 0:
        a = next_action[level]
        while a < n and not masks[level, a]:
            a += 1
        if a == n:
            level -= 1
            continue
        next_action[level] = a + 1
        child = states[level + 1]
        child[:] = states[level]
        apply(child, a)
        if level + 2 == depth:
            total += legal_mask(child, masks[level + 1])
        else:
            level += 1
            legal_mask(child, masks[level])
            next_action[level] = 0
    return total
