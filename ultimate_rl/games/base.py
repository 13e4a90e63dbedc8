"""The ``Game`` object every algorithm shares (OpenSpiel/pgx style): pure functions over states.

The rules live in the numba kernels (``ultimate_rl.games.kernels``); this class checks input,
copies states (they are immutable by convention) and turns kernel results into Python values.
A subclass supplies everything that is the game's own, so no code outside ``games/`` needs to know
which game it runs: its constants, initial state and symmetries, its board for the renderers
(``board_shape``, ``picture``, ``action_cell``), its notation for people (``parse_move``,
``move_text``, ``notation_help``), its mark names, its rules text and its ownership planes.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ultimate_rl.games import kernels, layout
from ultimate_rl.games.board import BoardPicture, BoardShape
from ultimate_rl.games.errors import GameOverError, IllegalActionError, InvalidStateError
from ultimate_rl.games.ownership import (
    OwnershipGrid,
    OwnershipPlane,
    ownership_grids,
    read_ownership,
)
from ultimate_rl.games.symmetry import Symmetry


class Game:
    """Rules of one two-player, zero-sum, perfect-information game."""

    name: ClassVar[str]
    game_id: ClassVar[int]
    title: ClassVar[str]  # the game's name for people: "Connect Four"
    mark_names: ClassVar[tuple[str, str]] = ("X", "O")  # how the two players are called
    notation_help: ClassVar[str]  # how a person types a move, in a sentence or two
    num_actions: int
    observation_shape: tuple[int, int, int]  # (planes, height, width) of ``encode``
    symmetries: list[Symmetry]  # the identity first; any group, a single one included
    board_shape: BoardShape  # the grid the renderers draw
    action_cells: np.ndarray  # the grid cell each action plays on, where that is fixed
    side_notes: tuple[str, ...] = ()  # lines a text picture prints beside the board's rows
    # the planes of the ownership target (``games.ownership``); none: no ownership head
    ownership: ClassVar[tuple[OwnershipPlane, ...]] = ()

    # --- what a subclass provides -------------------------------------------------------------
    def initial_state(self) -> np.ndarray:
        raise NotImplementedError

    def render(self, state: np.ndarray) -> str:
        raise NotImplementedError

    def action_to_string(self, action: int) -> str:
        raise NotImplementedError

    def string_to_action(self, text: str) -> int:
        raise NotImplementedError

    @property
    def rules(self) -> str:
        """The rules in two sentences, for people about to play."""
        raise NotImplementedError

    def picture(self, state: np.ndarray) -> BoardPicture:
        """What stands on every cell of ``state``, read from the game's own state layout."""
        raise NotImplementedError

    def parse_move(self, text: str) -> int:
        """The action a person's ``text`` names (already ``notation.normalise``d), legal or not.

        Raises ``MoveError`` saying what to type when the text names no action.
        """
        raise NotImplementedError

    # --- what a subclass may refine ------------------------------------------------------------
    @property
    def options(self) -> dict[str, Any]:
        """The options that rebuild this game with ``games.make``."""
        return {}

    @property
    def rules_options(self) -> dict[str, Any]:
        """The options that change the rules (not only what ``encode`` shows a network): games
        that agree on these are one game to play, whatever planes each network reads."""
        return self.options

    @property
    def rating_key(self) -> str:
        """The name ratings are kept under: one rating per game and set of rules options."""
        return "-".join([self.name, *(f"{k}{v}" for k, v in sorted(self.rules_options.items()))])

    def action_cell(self, state: np.ndarray, action: int) -> int:
        """The grid cell ``action`` plays on when played in ``state``."""
        return int(self.action_cells[action])

    def piece_of(self, action: int) -> str:
        """What ``action`` writes, where actions on one cell differ by it (a number); else ""."""
        return ""

    def move_text(self, action: int) -> str:
        """How a move is shown to people, in a notation ``parse_move`` reads."""
        return self.action_to_string(action)

    def why_illegal(self, state: np.ndarray, action: int) -> str:
        """A sentence saying why a well-formed ``action`` cannot be played in ``state``: its cell
        is taken, else the game's ``refusal``."""
        if self.picture(state).owners[self.action_cell(state, action)] >= 0:
            return f"{self.move_text(action)}: that cell is already taken"
        return f"{self.move_text(action)}{self.refusal(state, action)}"

    def refusal(self, state: np.ndarray, action: int) -> str:
        """What rule forbids ``action`` on a free cell, as the end of ``why_illegal``'s sentence
        (it follows the move's name)."""
        return " is not legal here"

    def where_to_play(self, state: np.ndarray) -> str:
        """A hint for the player to move: where they may play or what they may write; or ""."""
        return ""

    def exact_action_values(self, state: np.ndarray) -> np.ndarray | None:
        """The exact result of each action for the mover (+1 / 0 / -1; ``solver.ILLEGAL`` where
        illegal), or None where the game's solver cannot value ``state`` (uttt: anywhere)."""
        return None

    def exact_positions(self, count: int, seed: int) -> list[np.ndarray]:
        """``count`` seeded positions ``exact_action_values`` answers: the evaluation's
        optimal-move test set; [] for a game without a solver."""
        return []

    @property
    def ownership_grids(self) -> tuple[OwnershipGrid, ...]:
        """The ``ownership`` planes on this game's board, in order (empty: no ownership)."""
        return ownership_grids(self.ownership, self.board_shape)

    def final_ownership(self, state: np.ndarray) -> np.ndarray:
        """The ownership target of every position of a game that ended in ``state``, from the
        first player's view: one int8 class per entry of ``ownership_grids``, laid flat."""
        return read_ownership(self.ownership_grids, self.picture(state), self.mark_names)

    # --- shared API ----------------------------------------------------------------------------
    def check_state(self, state: np.ndarray) -> np.ndarray:
        """Returns ``state`` if it is a state of this game, else raises InvalidStateError."""
        if not isinstance(state, np.ndarray):
            raise InvalidStateError(f"a state is a numpy array, got {type(state).__name__}")
        if state.dtype != layout.STATE_DTYPE or state.shape != (layout.STATE_LEN,):
            raise InvalidStateError(
                f"a state is an int32 array of shape ({layout.STATE_LEN},), got {state.dtype} "
                f"{state.shape}; make states with game.initial_state() and game.apply()"
            )
        if state[layout.GAME] != self.game_id:
            raise InvalidStateError(
                f"this state belongs to game id {int(state[layout.GAME])}, not to {self.name!r}"
            )
        return state

    def current_player(self, state: np.ndarray) -> int:
        return int(self.check_state(state)[layout.PLAYER])

    def legal_mask(self, state: np.ndarray) -> np.ndarray:
        mask = np.zeros(layout.MAX_ACTIONS, dtype=np.uint8)
        kernels.legal_mask(self.check_state(state), mask)
        return mask[: self.num_actions].astype(bool)

    def legal_actions(self, state: np.ndarray) -> np.ndarray:
        return np.flatnonzero(self.legal_mask(state))

    def is_terminal(self, state: np.ndarray) -> bool:
        return bool(self.check_state(state)[layout.STATUS] != layout.ONGOING)

    def returns(self, state: np.ndarray) -> float:
        """+1 if the first player won, -1 if the second did, 0 for a draw or a game not over."""
        return float(kernels.outcome(self.check_state(state)))

    def winner(self, state: np.ndarray) -> int | None:
        """0 or 1 for the winning player, None for a draw or a game not over."""
        status = self.check_state(state)[layout.STATUS]
        return {layout.FIRST_WON: 0, layout.SECOND_WON: 1}.get(int(status))

    def apply(self, state: np.ndarray, action: int) -> np.ndarray:
        """The position after ``action``; ``state`` itself is left unchanged."""
        self.check_state(state)
        if state[layout.STATUS] != layout.ONGOING:
            raise GameOverError(f"the game is over ({self.outcome_text(state)}); start a new one")
        if isinstance(action, bool) or not isinstance(action, int | np.integer):
            raise IllegalActionError(action, self.legal_actions(state), "an action is an int")
        if not 0 <= action < self.num_actions:
            raise IllegalActionError(
                action, self.legal_actions(state), f"outside 0..{self.num_actions - 1}"
            )
        mask = self.legal_mask(state)
        if not mask[action]:
            raise IllegalActionError(action, np.flatnonzero(mask), "not legal in this position")
        new = state.copy()
        kernels.apply(new, int(action))
        return new

    def load_kernels(self) -> np.ndarray:
        """Plays the first legal move and returns the position after it: the compiled kernels a
        move runs are then loaded (half a second for uttt), before a server's or a load
        client's first real move waits on them."""
        start = self.initial_state()
        return self.apply(start, int(self.legal_actions(start)[0]))

    def apply_sequence(self, actions: list[int], state: np.ndarray | None = None) -> np.ndarray:
        """Plays ``actions`` one after the other from ``state`` (default: the start)."""
        state = self.initial_state() if state is None else state
        for action in actions:
            state = self.apply(state, action)
        return state

    def encode(self, state: np.ndarray) -> np.ndarray:
        planes = np.zeros(self.observation_shape, dtype=np.float32)
        kernels.encode(self.check_state(state), planes)
        return planes

    def outcome_text(
        self, state: np.ndarray, names: tuple[str, str] = ("first player", "second player")
    ) -> str:
        """``"<name> to move"``, ``"<name> won"`` or ``"draw"``, the players called ``names``."""
        status = int(self.check_state(state)[layout.STATUS])
        if status == layout.ONGOING:
            return f"{names[int(state[layout.PLAYER])]} to move"
        if status == layout.DRAW:
            return "draw"
        return f"{names[status - layout.FIRST_WON]} won"

    def __repr__(self) -> str:
        """The game as played: its class and rules options (a match record's header names it,
        so games of one rules read alike whatever planes their networks see)."""
        options = ", ".join(f"{key}={value!r}" for key, value in self.rules_options.items())
        return f"{type(self).__name__}({options})"
