"""PettingZoo AEC versions of the games, following PettingZoo's classic board-game conventions.

Agents ``"player_0"`` (moves first: X, odd numbers) and ``"player_1"``. ``observe(agent)`` is a
dict of the network planes from that agent's point of view and an int8 ``action_mask`` that is all
zeros when it is not that agent's turn. Rewards: +1 to the winner, -1 to the loser, 0 on a draw.
``env()`` wraps ``raw_env`` like PettingZoo's own classic envs: an illegal move ends the game with
-1 for the player who made it, an action outside the space raises, and call order is enforced.
Needs the optional ``pettingzoo`` extra (``pip install ultimate_rl[pettingzoo]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import AgentSelector, wrappers
except ImportError as err:  # pragma: no cover - only without the extra
    raise ImportError(
        "ultimate_rl.envs.pettingzoo needs PettingZoo: pip install 'ultimate_rl[pettingzoo]'"
    ) from err

from gymnasium import spaces

from ultimate_rl.envs.board_env import make_game, observation_space
from ultimate_rl.envs.render import render_rgb
from ultimate_rl.games import layout
from ultimate_rl.games.base import Game

AGENTS = ("player_0", "player_1")
RENDER_MODES = ("ansi", "rgb_array")


class raw_env(AECEnv):  # PettingZoo's name for the unwrapped env
    """Two agents alternate moves in one game (``"uttt"``, ``"numerical_ttt"``, ``"tictactoe"``)."""

    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": list(RENDER_MODES),
        "name": "ultimate_rl_board_game_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self, game: str | Game = "uttt", render_mode: str | None = None, **game_options: Any
    ) -> None:
        super().__init__()
        self.game = make_game(game, game_options)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {list(RENDER_MODES)}")
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"ultimate_rl_{self.game.name}_v0"}
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        obs_space = observation_space(self.game)
        self.observation_spaces = dict.fromkeys(AGENTS, obs_space)
        self.action_spaces = {a: spaces.Discrete(self.game.num_actions) for a in AGENTS}
        self._selector = AgentSelector(self.agents)
        self._state = self.game.initial_state()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def state_array(self) -> np.ndarray:
        """A copy of the current game state (for agents and solvers)."""
        return self._state.copy()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self.possible_agents.index(agent)
        # The encoders take the point of view from state[PLAYER], so seat this agent there.
        view = self._state.copy()
        view[layout.PLAYER] = player
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if agent == self.agent_selection:
            mask[:] = self.game.legal_mask(self._state)  # all False once the game is over
        return {"observation": self.game.encode(view), "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._state = self.game.initial_state()
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._selector.reinit(self.agents)
        self.agent_selection = self._selector.reset()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._state = self.game.apply(self._state, int(action))  # raises on an illegal action
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.game.is_terminal(self._state):
            winner = self.game.winner(self._state)
            if winner is not None:
                self.rewards[AGENTS[winner]] = 1.0
                self.rewards[AGENTS[1 - winner]] = -1.0
            self.terminations = dict.fromkeys(self.agents, True)
        self._accumulate_rewards()
        self.agent_selection = self._selector.next()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            return self.game.render(self._state)
        return render_rgb(self.game, self._state)

    def close(self) -> None:
        """Nothing to release (no window)."""


def env(game: str | Game = "uttt", render_mode: str | None = None, **game_options: Any) -> AECEnv:
    """The AEC env with PettingZoo's classic wrappers (illegal move: -1 and the game ends)."""
    wrapped: AECEnv = raw_env(game, render_mode=render_mode, **game_options)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
