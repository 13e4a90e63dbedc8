"""PLACEHOLDER (being written)."""
from ultimate_rl.games.base import Game


class NumericalTicTacToe(Game):
    name = "numerical_ttt"
