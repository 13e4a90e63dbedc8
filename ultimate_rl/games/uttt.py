"""PLACEHOLDER (being written)."""
from ultimate_rl.games.base import Game


class UltimateTicTacToe(Game):
    name = "uttt"
