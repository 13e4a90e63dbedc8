"""What a front end draws: the board as a grid of cells, as the game itself describes it.

The terminal and the browser draw the same ``BoardView``. It comes from the game's own board
description (``Game.board_shape``, ``Game.picture``, ``Game.action_cell``...), so the front ends
draw any game, Connect Four included, without a branch on its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ultimate_rl.games.base import Game
from ultimate_rl.games.board import BoardShape


@dataclass(frozen=True)
class BoardView:
    """One position as a front end draws it. Cell indices are grid indices (row * cols + col)."""

    title: str  # the game's name for people
    shape: BoardShape
    mark_names: tuple[str, str]  # how the two players are called: ("X", "O"), ("odd", "even")
    cells: list[str]  # "" for an empty cell, else what stands there ("X", "O", "7")
    owners: list[int]  # -1 empty, else the player (0 or 1) whose piece stands there
    last_cell: int | None
    cell_actions: list[list[int]]  # per cell: the legal actions a click on it plays
    action_pieces: list[str]  # per action: what it writes, where a cell offers a choice; else []
    pieces_left: list[str]  # what the mover may choose to write (sorted); [] without a choice
    to_move: int | None  # None once the game is over
    blocks: list[str]  # per block (uttt's small boards): "", a mark name or "draw"; else []
    active_blocks: list[int]  # blocks holding a cell the mover may play
    winning_cells: list[int]  # the cells of the line(s) that won the game
    hint: str  # the game's hint for the mover ("Play in board 5 (centre)."), "" when none
    notes: tuple[str, ...] = ()  # lines a text picture prints beside the board's rows

    @property
    def playable_cells(self) -> list[bool]:
        """Whether some legal action plays on each cell."""
        return [bool(actions) for actions in self.cell_actions]

    def to_json(self) -> dict[str, Any]:
        """Plain data for the browser."""
        return {
            "title": self.title,
            "rows": self.shape.rows,
            "cols": self.shape.cols,
            "block": self.shape.block,
            "mark_names": list(self.mark_names),
            "cells": self.cells,
            "owners": self.owners,
            "last_cell": self.last_cell,
            "playable_cells": self.playable_cells,
            "cell_actions": self.cell_actions,
            "action_pieces": self.action_pieces,
            "pieces_left": self.pieces_left,
            "to_move": self.to_move,
            "blocks": self.blocks,
            "active_blocks": self.active_blocks,
            "winning_cells": self.winning_cells,
            "hint": self.hint,
        }


def board_view(game: Game, state: np.ndarray) -> BoardView:
    """The picture of ``state`` for a front end."""
    picture = game.picture(state)
    shape = game.board_shape
    over = game.is_terminal(state)
    cell_actions: list[list[int]] = [[] for _ in range(shape.cells)]
    for action in [] if over else game.legal_actions(state):
        cell_actions[game.action_cell(state, int(action))].append(int(action))
    pieces = [game.piece_of(a) for a in range(game.num_actions)]
    has_pieces = any(pieces)
    legal_pieces = {pieces[a] for actions in cell_actions for a in actions}
    return BoardView(
        title=game.title,
        shape=shape,
        mark_names=game.mark_names,
        cells=picture.labels,
        owners=picture.owners,
        last_cell=picture.last_cell,
        cell_actions=cell_actions,
        action_pieces=pieces if has_pieces else [],
        pieces_left=sorted(legal_pieces, key=lambda p: (len(p), p)) if has_pieces else [],
        to_move=None if over else game.current_player(state),
        blocks=picture.blocks,
        active_blocks=sorted(
            {shape.block_of(c) for c, actions in enumerate(cell_actions) if actions}
            if shape.block
            else set()
        ),
        winning_cells=picture.winning_cells,
        hint="" if over else game.where_to_play(state),
        notes=game.side_notes,
    )
