"""Elo ratings by maximum likelihood (Bradley–Terry, draws as half points) with 95% intervals.

Model: player ``i`` scores against ``j`` with probability ``1 / (1 + 10 ** ((r_j - r_i) / 400))``;
a draw counts as half a win for each side, so the log-likelihood of a pair is
``S_ij log p_ij + S_ji log p_ji`` with ``S_ij`` the points ``i`` took from ``j``. The maximum is
found by Newton's method over every rating but the anchor's.

Scale: the ``anchor`` player is pinned at ``anchor_elo`` (the ladder pins UCT-1,000 = 1000), so
every other rating and interval is relative to it and the anchor's own interval has zero width.
Without an anchor the mean rating is pinned instead.

Stability: ``prior_draws`` virtual draws are added to every pair of players that met, a weak prior
that keeps the estimate finite when one side won every game (its rating is then a lower bound).

Intervals: 95% normal intervals from the observed Fisher information (the inverse Hessian of the
negative log-likelihood at the maximum). Treating a draw as two half games overstates the variance
of a drawn game, so the intervals are conservative when draws are frequent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

NATURAL_PER_ELO = math.log(10.0) / 400.0  # logistic slope: Elo -> natural log-odds
Z95 = 1.959963984540054


def expected_score(elo_difference: float) -> float:
    """Expected score of a player rated ``elo_difference`` above the opponent."""
    return 1.0 / (1.0 + 10.0 ** (-elo_difference / 400.0))


def elo_difference(score: float) -> float:
    """The Elo difference that predicts ``score`` (clipped away from 0 and 1 to stay finite)."""
    score = min(max(score, 1e-6), 1.0 - 1e-6)
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class RatedGame:
    """One played game as the rating model sees it: who moved first and the first mover's score."""

    first: str
    second: str
    first_score: float  # 1 win, 0.5 draw, 0 loss, for ``first``


@dataclass(frozen=True)
class PlayerRating:
    """A player's rating with its 95% interval, and the record behind it."""

    name: str
    elo: float
    ci_low: float
    ci_high: float
    stderr: float
    games: int
    wins: int
    draws: int
    losses: int
    first_player_score: float | None  # mean score in the games it moved first; None if none
    second_player_score: float | None

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else float("nan")

    @property
    def draw_rate(self) -> float:
        return self.draws / self.games if self.games else float("nan")

    def as_dict(self) -> dict[str, float | int | str | None]:
        return {
            "name": self.name,
            "elo": self.elo,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "stderr": self.stderr,
            "games": self.games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": self.score,
            "draw_rate": self.draw_rate,
            "first_player_score": self.first_player_score,
            "second_player_score": self.second_player_score,
        }


@dataclass(frozen=True)
class Ratings:
    """The fitted ratings of every player, and the covariance of their Elo values."""

    players: dict[str, PlayerRating]
    covariance: np.ndarray  # Elo^2, in the order of ``names``
    names: list[str]
    anchor: str | None
    anchor_elo: float
    prior_draws: float
    num_games: int

    def __getitem__(self, name: str) -> PlayerRating:
        if name not in self.players:
            raise KeyError(f"no rating for {name!r}; rated players: {self.names}")
        return self.players[name]

    def difference(self, a: str, b: str) -> tuple[float, float, float]:
        """``elo(a) - elo(b)`` and its 95% interval, from the covariance of the two ratings."""
        i, j = self.names.index(a), self.names.index(b)
        cov = self.covariance
        stderr = math.sqrt(max(cov[i, i] + cov[j, j] - 2.0 * cov[i, j], 0.0))
        diff = self.players[a].elo - self.players[b].elo
        return diff, diff - Z95 * stderr, diff + Z95 * stderr

    def as_dict(self) -> dict[str, object]:
        return {
            "anchor": self.anchor,
            "anchor_elo": self.anchor_elo,
            "prior_draws": self.prior_draws,
            "num_games": self.num_games,
            "method": "Bradley-Terry maximum likelihood, draws as half points; "
            "95% intervals from the observed Fisher information",
            "players": [self.players[n].as_dict() for n in self.names],
        }


def fit_ratings(
    games: Iterable[RatedGame],
    anchor: str | None = None,
    anchor_elo: float = 1000.0,
    prior_draws: float = 1.0,
    players: Sequence[str] = (),
) -> Ratings:
    """Maximum-likelihood Elo of every player in ``games`` (plus ``players``, to fix the order)."""
    games = list(games)
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, got {prior_draws}")
    names = list(dict.fromkeys([*players, *(n for g in games for n in (g.first, g.second))]))
    if not names:
        raise ValueError("no games to rate: play some games first")
    index = {n: i for i, n in enumerate(names)}
    if anchor is not None and anchor not in index:
        raise ValueError(f"anchor {anchor!r} has played no game; rated players: {names}")
    n = len(names)
    played = np.zeros((n, n))  # games between i and j (symmetric)
    points = np.zeros((n, n))  # points i took from j
    for g in games:
        if g.first_score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a game score is 0, 0.5 or 1, got {g.first_score}")
        if g.first == g.second:
            raise ValueError(f"{g.first!r} cannot be rated against itself; give the copies labels")
        i, j = index[g.first], index[g.second]
        played[i, j] += 1
        played[j, i] += 1
        points[i, j] += g.first_score
        points[j, i] += 1.0 - g.first_score
    _check_connected(names, played)
    met = played > 0
    theta = _newton(played + prior_draws * met, points + 0.5 * prior_draws * met, index, anchor)
    hessian = _neg_hessian(played + prior_draws * met, theta)
    covariance = _covariance(hessian, index[anchor] if anchor is not None else None)
    elo = theta / NATURAL_PER_ELO
    elo += anchor_elo - (elo[index[anchor]] if anchor is not None else elo.mean())
    covariance /= NATURAL_PER_ELO**2
    ratings = {
        name: _player_rating(name, games, elo[i], math.sqrt(max(covariance[i, i], 0.0)))
        for name, i in index.items()
    }
    return Ratings(ratings, covariance, names, anchor, anchor_elo, prior_draws, len(games))


def _check_connected(names: list[str], played: np.ndarray) -> None:
    """Ratings of players that never met, even indirectly, are not comparable: refuse them."""
    seen, frontier = {0}, [0]
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(played[i]):
            if int(j) not in seen:
                seen.add(int(j))
                frontier.append(int(j))
    if len(seen) < len(names):
        cut_off = [names[i] for i in range(len(names)) if i not in seen]
        raise ValueError(
            f"players {cut_off} are not linked by games to {names[0]!r}; play a match that "
            "connects them (e.g. against a common ladder rung) before rating them together"
        )


def _neg_hessian(played: np.ndarray, theta: np.ndarray) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    w = played * p * (1.0 - p)
    return np.diag(w.sum(axis=1)) - w


def _log_likelihood(points: np.ndarray, theta: np.ndarray) -> float:
    diff = theta[:, None] - theta[None, :]
    return float(-(points * np.logaddexp(0.0, -diff)).sum())


def _newton(
    played: np.ndarray, points: np.ndarray, index: dict[str, int], anchor: str | None
) -> np.ndarray:
    """Newton ascent with step halving; the anchor (or player 0) stays at 0."""
    n = len(index)
    pinned = index[anchor] if anchor is not None else 0
    free = np.array([i for i in range(n) if i != pinned], dtype=np.int64)
    theta = np.zeros(n)
    if free.size == 0:
        return theta
    ll = _log_likelihood(points, theta)
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        grad = (points - played * p).sum(axis=1)
        h = _neg_hessian(played, theta)[np.ix_(free, free)]
        step = np.zeros(n)
        try:
            step[free] = np.linalg.solve(h, grad[free])
        except np.linalg.LinAlgError:  # p(1 - p) underflowed: ratings running off to infinity
            break
        scale = 1.0
        while scale > 1e-8:
            candidate = theta + scale * step
            new_ll = _log_likelihood(points, candidate)
            if new_ll >= ll - 1e-12:
                break
            scale *= 0.5
        theta, ll = candidate, new_ll
        if np.max(np.abs(scale * step)) < 1e-10:
            return theta
        if np.max(np.abs(theta)) > 50.0:  # about 8,700 Elo: the maximum does not exist
            break
    raise ValueError(
        "Elo fit did not converge: some player won (or lost) every game and prior_draws=0; "
        "use prior_draws > 0 (the default 1 adds one virtual draw per pair)"
    )


def _covariance(neg_hessian: np.ndarray, pinned: int | None) -> np.ndarray:
    """Covariance of the natural-scale ratings with the anchor fixed (or the mean fixed)."""
    n = neg_hessian.shape[0]
    ref = 0 if pinned is None else pinned
    free = [i for i in range(n) if i != ref]
    cov = np.zeros((n, n))
    if free:
        cov[np.ix_(free, free)] = np.linalg.inv(neg_hessian[np.ix_(free, free)])
    if pinned is None:  # ratings minus their mean do not depend on which player was pinned
        centre = np.eye(n) - 1.0 / n
        cov = centre @ cov @ centre.T
    return cov


def _player_rating(name: str, games: list[RatedGame], elo: float, stderr: float) -> PlayerRating:
    as_first = [g.first_score for g in games if g.first == name]
    as_second = [1.0 - g.first_score for g in games if g.second == name]
    scores = as_first + as_second
    return PlayerRating(
        name=name,
        elo=float(elo),
        ci_low=float(elo - Z95 * stderr),
        ci_high=float(elo + Z95 * stderr),
        stderr=float(stderr),
        games=len(scores),
        wins=sum(s == 1.0 for s in scores),
        draws=sum(s == 0.5 for s in scores),
        losses=sum(s == 0.0 for s in scores),
        first_player_score=float(np.mean(as_first)) if as_first else None,
        second_player_score=float(np.mean(as_second)) if as_second else None,
    )
