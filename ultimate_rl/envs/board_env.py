"""One Gymnasium environment for every game: the agent plays one side, an opponent the other.

See DESIGN.md's environment contract. The game is a constructor argument, so the registered IDs
differ only in their default ``game``. With ``opponent=None`` (self-play) each ``step`` is the
move of whoever is to play and the reward goes to that player.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from ultimate_rl import games
from ultimate_rl.envs.opponents import checked_move, make_opponent
from ultimate_rl.envs.render import render_rgb
from ultimate_rl.games import kernels, layout
from ultimate_rl.games.base import Game
from ultimate_rl.games.errors import IllegalActionError

ObsType = dict[str, np.ndarray]
ILLEGAL_ACTION_MODES = ("lose", "raise")
RESET_OPTIONS = ("agent_player",)


def make_game(game: str | Game, options: Mapping[str, Any]) -> Game:
    """A game object from a name and its options, or a ready one (then without options)."""
    if isinstance(game, Game):
        if options:
            raise ValueError(f"game options {dict(options)} given with a ready game object {game}")
        return game
    return games.make(game, **options)


def observation_space(game: Game) -> spaces.Dict:
    """The PettingZoo board-game convention: network planes plus the legal-action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, game.observation_shape, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (game.num_actions,), dtype=np.int8),
        }
    )


def check_action(action: Any, num_actions: int) -> int:
    """The action as an int, or an IllegalActionError when it lies outside the action space."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action[()]
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise IllegalActionError(
            action, [], f"an action is an int in 0..{num_actions - 1}, got {type(action).__name__}"
        )
    if not 0 <= action < num_actions:
        raise IllegalActionError(
            action, [], f"outside the action space Discrete({num_actions}); it always raises"
        )
    return int(action)


def check_illegal_action_mode(mode: object) -> str:
    if mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(
            f"illegal_action must be one of {list(ILLEGAL_ACTION_MODES)}, got {mode!r}"
        )
    return mode  # type: ignore[return-value]


def check_agent_player(agent_player: object) -> int | str:
    if agent_player not in (0, 1, "random") or isinstance(agent_player, bool):
        raise ValueError(f"agent_player must be 0, 1 or 'random', got {agent_player!r}")
    return agent_player  # type: ignore[return-value]


class BoardGameEnv(gym.Env[ObsType, np.int64]):
    """A two-player board game as a single-agent env (or a self-play env with ``opponent=None``).

    Args:
        game: ``"uttt"``, ``"numerical_ttt"``, ``"tictactoe"`` or a ``Game`` object.
        opponent: ``"random"``, ``"mcts"`` (UCT from ``ultimate_rl.agents``), a callable
            ``(game, state) -> action``, an object with ``select_action(game, state)``, or None.
        opponent_options: options of ``agents.make("uct", ...)`` for ``opponent="mcts"``.
        agent_player: the agent's side, 0 (moves first), 1, or ``"random"`` each episode.
        illegal_action: ``"lose"`` (the episode ends with reward -1) or ``"raise"``.
        render_mode: None, ``"ansi"`` (text) or ``"rgb_array"`` (a numpy picture).
        **game_options: passed to ``games.make`` (``size``, ``k`` for tic-tac-toe).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}  # noqa: RUF012

    def __init__(
        self,
        game: str | Game = "uttt",
        *,
        opponent: object = "random",
        opponent_options: Mapping[str, Any] | None = None,
        agent_player: int | str = 0,
        illegal_action: str = "lose",
        render_mode: str | None = None,
        **game_options: Any,
    ) -> None:
        self.game = make_game(game, game_options)
        self._opponent = make_opponent(opponent, opponent_options)
        self.agent_player_option = check_agent_player(agent_player)
        self.illegal_action = check_illegal_action_mode(illegal_action)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.observation_space = observation_space(self.game)
        self.action_space = spaces.Discrete(self.game.num_actions)
        self.agent_player: int | None = None  # this episode's side; None in self-play mode
        self._state: np.ndarray | None = None
        self._legal = np.zeros(self.game.num_actions, dtype=bool)  # legal mask of self._state
        self._done = False

    @property
    def state(self) -> np.ndarray:
        """A copy of the current game state (for agents and solvers)."""
        return self._live_state().copy()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the player to move as a bool array (sb3-contrib MaskablePPO)."""
        self._live_state()
        return self._legal.copy()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Starts a new game; ``options={"agent_player": 0 | 1}`` picks this episode's side."""
        super().reset(seed=seed)
        options = options or {}
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(
                f"unknown reset options {sorted(unknown)}; known: {list(RESET_OPTIONS)}"
            )
        side = check_agent_player(options.get("agent_player", self.agent_player_option))
        if self._opponent is None:
            self.agent_player = None
        else:
            self.agent_player = int(self.np_random.integers(2)) if side == "random" else int(side)
        self._set_state(self.game.initial_state())
        self._done = False
        opponent_action = -1
        if self.agent_player == 1:
            opponent_action = self._opponent_move()
        return self._observation(), self._info(opponent_action)

    def step(self, action: Any) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        state = self._live_state()
        if self._done:
            raise ResetNeeded("the episode is over; call reset() before stepping again")
        action = check_action(action, self.game.num_actions)
        mover = int(state[layout.PLAYER])
        legal = self._legal
        if not legal[action]:
            if self.illegal_action == "raise":
                raise IllegalActionError(
                    action, np.flatnonzero(legal), "not legal in this position"
                )
            self._done = True
            info = self._info(-1)
            info["illegal_action"] = True
            info["reason"] = (
                f"action {action} is not legal in this position; the mover loses "
                f"(legal: {np.flatnonzero(legal).tolist()})"
            )
            return self._observation(), -1.0, True, False, info
        self._play(action)
        opponent_action = -1
        if self._opponent is not None and self._state[layout.STATUS] == layout.ONGOING:
            opponent_action = self._opponent_move()
        self._done = bool(self._state[layout.STATUS] != layout.ONGOING)
        winner = self.game.winner(self._state)
        reward = 0.0 if winner is None else (1.0 if winner == mover else -1.0)
        return self._observation(), reward, self._done, False, self._info(opponent_action)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode= to the env")
            return None
        state = self._live_state()
        if self.render_mode == "ansi":
            return self.game.render(state)
        return render_rgb(self.game, state)

    # --- internals ----------------------------------------------------------------------------
    def _live_state(self) -> np.ndarray:
        if self._state is None:
            raise ResetNeeded("call reset() before using the environment")
        return self._state

    def _set_state(self, state: np.ndarray) -> None:
        self._state = state
        self._legal = self.game.legal_mask(state)

    def _play(self, action: int) -> None:
        """Plays an action already checked against ``self._legal`` (so no second check)."""
        state = self._live_state().copy()
        kernels.apply(state, action)
        self._set_state(state)

    def _opponent_move(self) -> int:
        assert self._opponent is not None
        action = checked_move(
            self._opponent, self.game, self._live_state(), self._legal, self.np_random
        )
        self._play(action)
        return action

    def _observation(self) -> ObsType:
        return {
            "observation": self.game.encode(self._live_state()),
            "action_mask": self._legal.astype(np.int8),
        }

    def _info(self, opponent_action: int) -> dict[str, Any]:
        info: dict[str, Any] = {
            "action_mask": self._legal.copy(),
            "current_player": int(self._live_state()[layout.PLAYER]),
            "opponent_action": opponent_action,
            "illegal_action": False,
        }
        if self.agent_player is not None:
            info["agent_player"] = self.agent_player
        return info
