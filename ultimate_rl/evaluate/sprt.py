"""Sequential probability ratio test for "is A stronger than B", as chess engine testing runs it.

H0: A is ``elo0`` stronger than B; H1: A is ``elo1`` stronger (logistic Elo, ``elo0 < elo1``).
The log-likelihood ratio uses the generalised SPRT with the trinomial (win/draw/loss) normal
approximation of fishtest: ``LLR = N (s1 - s0) (2 s - s0 - s1) / (2 var)``, with ``s`` the mean
score per game, ``var`` its variance per game and ``s0, s1`` the scores the hypotheses predict.
The match stops when the LLR leaves ``[log(beta / (1 - alpha)), log((1 - beta) / alpha)]``.

The variance is estimated with half a virtual game of each outcome, so that a short all-draw or
all-win start does not give a zero variance (and an infinite LLR) after one game.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from ultimate_rl.evaluate.elo import expected_score

Decision = Literal["H0", "H1"]


@dataclass(frozen=True)
class SPRTConfig:
    """Hypotheses (Elo of A over B) and error rates: alpha = P(accept H1 | H0), beta the reverse."""

    elo0: float = 0.0
    elo1: float = 20.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"SPRT needs elo0 < elo1, got elo0={self.elo0}, elo1={self.elo1}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"SPRT {name} must lie in (0, 0.5), got {value}")

    @property
    def lower_bound(self) -> float:
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True)
class SPRTResult:
    """The test's state after ``wins + draws + losses`` games of A."""

    llr: float
    lower_bound: float
    upper_bound: float
    wins: int
    draws: int
    losses: int

    @property
    def decision(self) -> Decision | None:
        """``"H1"`` (A is stronger), ``"H0"`` (it is not), or None while the test goes on."""
        if self.llr >= self.upper_bound:
            return "H1"
        if self.llr <= self.lower_bound:
            return "H0"
        return None

    def as_dict(self) -> dict[str, float | int | str | None]:
        return {
            "llr": self.llr,
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "decision": self.decision,
        }


def sprt(wins: int, draws: int, losses: int, config: SPRTConfig) -> SPRTResult:
    """The GSPRT log-likelihood ratio of A's results against B."""
    if min(wins, draws, losses) < 0:
        raise ValueError(f"game counts must be >= 0, got W={wins} D={draws} L={losses}")
    n = wins + draws + losses
    llr = 0.0
    if n > 0:
        mean = (wins + 0.5 * draws) / n
        w, d, lo = wins + 0.5, draws + 0.5, losses + 0.5
        var = (w * (1.0 - mean) ** 2 + d * (0.5 - mean) ** 2 + lo * mean**2) / (w + d + lo)
        s0, s1 = expected_score(config.elo0), expected_score(config.elo1)
        llr = n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
    return SPRTResult(llr, config.lower_bound, config.upper_bound, wins, draws, losses)
