"""Game-agnostic numba kernels: one entry point per operation, dispatching on ``state[GAME]``.

Search, self-play and the environments call these, so a single compiled search kernel serves
every game. Each game module under this package provides the same four kernels:

- ``legal_mask(state, mask) -> int``: writes ``mask[:num_actions]`` (uint8 0/1), returns the count.
- ``apply(state, action)``: plays a LEGAL action in place and updates the whole header
  (PLAYER, STATUS, MOVES, LAST). Legality is the caller's job (the Python ``Game`` checks it).
- ``encode(state, planes)``: writes the float32 network planes (C, H, W), mover's point of view.
- ``num_actions(state) -> int``.

``uttt`` also provides ``random_playout(state) -> float``, a bitboard fast path for the UCT
baseline's hot loop; the other games use the generic one here.

All of them take a 1-D int32 state of ``layout.STATE_LEN`` entries.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import layout as L
from ultimate_rl.games.kernels import numerical_ttt as _num
from ultimate_rl.games.kernels import tictactoe as _ttt
from ultimate_rl.games.kernels import uttt as _uttt


@njit(cache=True)
def num_actions(state: np.ndarray) -> int:
    g = state[L.GAME]
    if g == L.UTTT_ID:
        return _uttt.num_actions(state)
    if g == L.NUMERICAL_TTT_ID:
        return _num.num_actions(state)
    return _ttt.num_actions(state)


@njit(cache=True)
def legal_mask(state: np.ndarray, mask: np.ndarray) -> int:
    g = state[L.GAME]
    if g == L.UTTT_ID:
        return _uttt.legal_mask(state, mask)
    if g == L.NUMERICAL_TTT_ID:
        return _num.legal_mask(state, mask)
    return _ttt.legal_mask(state, mask)


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    g = state[L.GAME]
    if g == L.UTTT_ID:
        _uttt.apply(state, action)
    elif g == L.NUMERICAL_TTT_ID:
        _num.apply(state, action)
    else:
        _ttt.apply(state, action)


@njit(cache=True)
def encode(state: np.ndarray, planes: np.ndarray) -> None:
    g = state[L.GAME]
    if g == L.UTTT_ID:
        _uttt.encode(state, planes)
    elif g == L.NUMERICAL_TTT_ID:
        _num.encode(state, planes)
    else:
        _ttt.encode(state, planes)


@njit(cache=True)
def encode_batch(states: np.ndarray, planes: np.ndarray, masks: np.ndarray) -> None:
    """Planes and bool legal masks of many states (rows), so callers need no Python loop.

    ``planes`` [N, C, H, W] float32 and ``masks`` [N, A] bool are overwritten.
    """
    scratch = np.zeros(L.MAX_ACTIONS, dtype=np.uint8)
    for i in range(states.shape[0]):
        planes[i] = 0.0
        encode(states[i], planes[i])
        legal_mask(states[i], scratch)
        for a in range(masks.shape[1]):
            masks[i, a] = scratch[a] != 0


@njit(cache=True)
def is_terminal(state: np.ndarray) -> bool:
    return state[L.STATUS] != L.ONGOING


@njit(cache=True)
def outcome(state: np.ndarray) -> float:
    """+1 / -1 / 0 from the first player's point of view (0 also while the game goes on)."""
    s = state[L.STATUS]
    if s == L.FIRST_WON:
        return 1.0
    if s == L.SECOND_WON:
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
def random_playout(state: np.ndarray) -> float:
    """Plays uniformly random moves from a COPY of ``state``; returns the first player's result."""
    if state[L.GAME] == L.UTTT_ID:
        return _uttt.random_playout(state)
    s = state.copy()
    mask = np.empty(L.MAX_ACTIONS, dtype=np.uint8)
    while s[L.STATUS] == L.ONGOING:
        apply(s, random_action(s, mask))
    return outcome(s)


@njit(cache=True)
def perft(state: np.ndarray, depth: int) -> int:
    """Number of move sequences of length ``depth`` from ``state`` (games that end sooner count 0).

    The standard move-generator check: iterative depth-first search with one state and one legal
    mask per level, counting the last level's moves without playing them.
    """
    if depth <= 0:
        return 1
    n = num_actions(state)
    states = np.empty((depth, L.STATE_LEN), dtype=state.dtype)
    masks = np.zeros((depth, L.MAX_ACTIONS), dtype=np.uint8)
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
