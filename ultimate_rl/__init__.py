"""ultimate_rl: AlphaZero-style training for board games, built first for Ultimate Tic-Tac-Toe."""

from __future__ import annotations

from ultimate_rl import games

__version__ = "0.1.0"
__all__ = ["__version__", "games"]
