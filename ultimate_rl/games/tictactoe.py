"""PLACEHOLDER (being written)."""
from ultimate_rl.games.base import Game


class TicTacToe(Game):
    name = "tictactoe"
