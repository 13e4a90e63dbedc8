"""A Gymnasium ``VectorEnv`` that steps many boards of one game in a single numba kernel call.

Each ``step`` runs one kernel over all boards: it checks and plays the agents' actions, plays the
random opponent's replies, writes rewards, observations and masks, and resets boards whose episode
ended on the previous step. Autoreset follows gymnasium's ``AutoresetMode.NEXT_STEP`` (its default):
the step after a board's episode ends returns that board's new first observation with reward 0,
``terminated=False``, and its action is ignored.

Only the opponents that run inside the kernel are offered: ``"random"`` and ``None`` (self-play);
for any other opponent use ``gymnasium.make_vec(..., vectorization_mode="sync")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numba import njit

from ultimate_rl.envs.board_env import (
    check_agent_player,
    check_illegal_action_mode,
    make_game,
    observation_space,
)
from ultimate_rl.games import kernels, layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import IllegalActionError

VECTOR_OPPONENTS = ("random", None)
RANDOM_SIDE = -1  # value of agent_player in the kernel: draw the side each episode


@njit(cache=True)
def _random_below(rng: np.ndarray, i: int, n: int) -> int:
    """splitmix64 step of board ``i``'s own generator: a uniform int in [0, n)."""
    rng[i] += np.uint64(0x9E3779B97F4A7C15)
    z = rng[i]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return int(z % np.uint64(n))


@njit(cache=True)
def _random_move(state: np.ndarray, rng: np.ndarray, i: int, mask: np.ndarray) -> int:
    """Plays a uniformly random legal move on ``state``; returns it."""
    pick = _random_below(rng, i, kernels.legal_mask(state, mask))
    action = 0
    while True:
        if mask[action]:
            if pick == 0:
                break
            pick -= 1
        action += 1
    kernels.apply(state, action)
    return action


@njit(cache=True)
def _observe(
    state: np.ndarray, planes: np.ndarray, action_mask: np.ndarray, mask: np.ndarray
) -> None:
    planes[:] = 0.0
    kernels.encode(state, planes)
    mask[:] = 0
    kernels.legal_mask(state, mask)
    for a in range(action_mask.shape[0]):
        action_mask[a] = mask[a]


@njit(cache=True)
def _reset_board(
    i: int,
    states: np.ndarray,
    initial: np.ndarray,
    side_option: int,
    sides: np.ndarray,
    opponent: bool,
    rng: np.ndarray,
    opponent_actions: np.ndarray,
    mask: np.ndarray,
) -> None:
    """A new episode on board ``i``; the opponent opens when the agent plays second."""
    states[i, :] = initial
    sides[i] = _random_below(rng, i, 2) if side_option == RANDOM_SIDE else side_option
    opponent_actions[i] = -1
    if opponent and sides[i] == 1:
        opponent_actions[i] = _random_move(states[i], rng, i, mask)


@njit(cache=True)
def _step_boards(
    states: np.ndarray,
    initial: np.ndarray,
    actions: np.ndarray,
    side_option: int,
    sides: np.ndarray,
    opponent: bool,
    illegal_loses: bool,
    needs_reset: np.ndarray,
    rng: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    illegal: np.ndarray,
    opponent_actions: np.ndarray,
    planes: np.ndarray,
    action_masks: np.ndarray,
) -> int:
    """One step of every board. Returns -1, or the first board with an illegal action when
    ``illegal_loses`` is False (then no board has changed, so the caller can raise cleanly)."""
    mask = np.zeros(layout.MAX_ACTIONS, dtype=np.uint8)
    if not illegal_loses:
        for i in range(states.shape[0]):
            if not needs_reset[i]:
                kernels.legal_mask(states[i], mask)
                if not mask[actions[i]]:
                    return i
    for i in range(states.shape[0]):
        state = states[i]
        rewards[i] = 0.0
        terminated[i] = False
        illegal[i] = False
        if needs_reset[i]:
            _reset_board(
                i, states, initial, side_option, sides, opponent, rng, opponent_actions, mask
            )
        else:
            opponent_actions[i] = -1
            mover = state[layout.PLAYER]
            kernels.legal_mask(state, mask)
            if not mask[actions[i]]:
                illegal[i] = True
                rewards[i] = -1.0
                terminated[i] = True
            else:
                kernels.apply(state, actions[i])
                if opponent and state[layout.STATUS] == layout.ONGOING:
                    opponent_actions[i] = _random_move(state, rng, i, mask)
                if state[layout.STATUS] != layout.ONGOING:
                    terminated[i] = True
                    first_result = kernels.outcome(state)
                    rewards[i] = first_result if mover == 0 else -first_result
        needs_reset[i] = terminated[i]
        _observe(state, planes[i], action_masks[i], mask)
    return -1


class BoardGameVectorEnv(VectorEnv):
    """``num_envs`` boards of one game against the random opponent (or in self-play).

    Infos (arrays over boards, each with gymnasium's ``_key`` presence mask): ``current_player``,
    ``opponent_action`` (-1 when it did not move), ``illegal_action`` and, with an opponent,
    ``agent_player``. Seeding: ``reset(seed=...)`` seeds one generator per board from it.
    """

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 16,
        game: str | Game = "uttt",
        *,
        opponent: str | None = "random",
        agent_player: int | str = 0,
        illegal_action: str = "lose",
        render_mode: str | None = None,
        **game_options: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if opponent not in VECTOR_OPPONENTS:
            raise ValueError(
                f"the vector env plays opponent 'random' or None (self-play), got {opponent!r}; "
                "for other opponents use gymnasium.make_vec(..., vectorization_mode='sync')"
            )
        if render_mode is not None:
            raise ValueError(
                "the vector env does not render; use gymnasium.make_vec(..., "
                f"vectorization_mode='sync', render_mode={render_mode!r}) for pictures"
            )
        side = check_agent_player(agent_player)
        self.game = make_game(game, game_options)
        self.num_envs = num_envs
        self.render_mode = None
        self.opponent = opponent
        self.illegal_action = check_illegal_action_mode(illegal_action)
        self._side_option = RANDOM_SIDE if side == "random" else int(side)
        self.single_observation_space = observation_space(self.game)
        self.single_action_space = spaces.Discrete(self.game.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

        n, shape = num_envs, self.game.observation_shape
        self._initial = self.game.initial_state()
        self._states = np.tile(self._initial, (n, 1))
        self._sides = np.zeros(n, dtype=np.int64)
        self._needs_reset = np.ones(n, dtype=np.bool_)
        self._rng = np.zeros(n, dtype=np.uint64)
        self._rewards = np.zeros(n, dtype=np.float64)
        self._terminated = np.zeros(n, dtype=np.bool_)
        self._illegal = np.zeros(n, dtype=np.bool_)
        self._opponent_actions = np.full(n, -1, dtype=np.int64)
        self._planes = np.zeros((n, *shape), dtype=np.float32)
        self._masks = np.zeros((n, self.game.num_actions), dtype=np.int8)
        self._present = np.ones(n, dtype=np.bool_)
        self._started = False

    @property
    def states(self) -> np.ndarray:
        """A copy of every board's game state, shape (num_envs, STATE_LEN)."""
        return self._states.copy()

    def action_masks(self) -> np.ndarray:
        """Legal actions of each board as a bool array (num_envs, num_actions)."""
        return self._masks.astype(bool)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if options:
            raise ValueError(f"the vector env takes no reset options, got {options}")
        if isinstance(seed, list | tuple):
            if len(seed) != self.num_envs:
                raise ValueError(f"got {len(seed)} seeds for {self.num_envs} boards")
            self._rng[:] = [np.random.SeedSequence(s).generate_state(1, np.uint64)[0] for s in seed]
        else:
            super().reset(seed=seed)
            self._rng[:] = self.np_random.integers(0, 2**63, size=self.num_envs, dtype=np.uint64)
        self._needs_reset[:] = True
        self._started = True
        obs, _, _, _, infos = self._run(np.zeros(self.num_envs, dtype=np.int64))
        return obs, infos

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._started:
            raise ResetNeeded("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise IllegalActionError(
                actions,
                [],
                f"actions are {self.num_envs} ints, got {actions.dtype} {actions.shape}",
            )
        outside = (actions < 0) | (actions >= self.game.num_actions)
        if outside.any():
            board = int(np.flatnonzero(outside)[0])
            raise IllegalActionError(
                int(actions[board]),
                [],
                f"board {board}: outside the action space Discrete({self.game.num_actions})",
            )
        return self._run(actions.astype(np.int64))

    def _run(
        self, actions: np.ndarray
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        bad = _step_boards(
            self._states,
            self._initial,
            actions,
            self._side_option,
            self._sides,
            self.opponent is not None,
            self.illegal_action == "lose",
            self._needs_reset,
            self._rng,
            self._rewards,
            self._terminated,
            self._illegal,
            self._opponent_actions,
            self._planes,
            self._masks,
        )
        if bad >= 0:
            legal = self.game.legal_actions(self._states[bad])
            raise IllegalActionError(int(actions[bad]), legal, f"board {bad}: not legal there")
        obs = {"observation": self._planes.copy(), "action_mask": self._masks.copy()}
        infos: dict[str, Any] = {
            "current_player": self._states[:, layout.PLAYER].astype(np.int64),
            "opponent_action": self._opponent_actions.copy(),
            "illegal_action": self._illegal.copy(),
        }
        if self.opponent is not None:
            infos["agent_player"] = self._sides.copy()
        for key in list(infos):
            infos[f"_{key}"] = self._present.copy()
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        return obs, self._rewards.copy(), self._terminated.copy(), truncated, infos
