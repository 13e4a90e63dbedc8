"""Bradley–Terry Elo and SPRT on synthetic results whose true ratings are known."""

from __future__ import annotations

import numpy as np
import pytest

from ultimate_rl.evaluate.elo import RatedGame, elo_difference, expected_score, fit_ratings
from ultimate_rl.evaluate.sprt import SPRTConfig, sprt


def synthetic_games(
    true_elo: dict[str, float], games_per_pair: int, draw_share: float, seed: int
) -> list[RatedGame]:
    """Games between every pair, colours alternating, scores drawn from the Elo model.

    A draw replaces part of both sides' decisive results, so the expected score is unchanged.
    """
    rng = np.random.default_rng(seed)
    names = list(true_elo)
    games = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = expected_score(true_elo[a] - true_elo[b])
            draw = draw_share * 2 * min(p, 1 - p)
            for k in range(games_per_pair):
                u = rng.random()
                score = 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0
                first, second = (a, b) if k % 2 == 0 else (b, a)
                games.append(RatedGame(first, second, score if first == a else 1.0 - score))
    return games


TRUE = {"weak": 600.0, "mid": 850.0, "anchor": 1000.0, "strong": 1200.0}


@pytest.mark.parametrize("draw_share", [0.0, 0.5])
def test_mle_recovers_known_ratings_within_intervals(draw_share: float) -> None:
    ratings = fit_ratings(synthetic_games(TRUE, 400, draw_share, seed=1), anchor="anchor")
    assert ratings["anchor"].elo == pytest.approx(1000.0)
    assert ratings["anchor"].ci_high - ratings["anchor"].ci_low == pytest.approx(0.0)
    for name, true in TRUE.items():
        r = ratings[name]
        assert r.ci_low <= true <= r.ci_high, (name, r)
        if name != "anchor":
            assert 10.0 < r.ci_high - r.ci_low < 200.0  # an interval, not a point or everything


def test_intervals_cover_truth_at_about_95_percent() -> None:
    covered = 0
    trials = 40
    for seed in range(trials):
        ratings = fit_ratings(synthetic_games(TRUE, 60, 0.3, seed), anchor="anchor")
        r = ratings["strong"]
        covered += r.ci_low <= TRUE["strong"] <= r.ci_high
    assert covered >= 0.8 * trials  # conservative intervals: at least nominal, up to noise


def test_order_and_separation_from_the_covariance() -> None:
    ratings = fit_ratings(synthetic_games(TRUE, 300, 0.2, seed=3), anchor="anchor")
    elo = [ratings[n].elo for n in ("weak", "mid", "anchor", "strong")]
    assert elo == sorted(elo)
    diff, low, high = ratings.difference("strong", "weak")
    assert low > 0 and low < diff < high


def test_player_against_itself_scores_half_within_its_interval() -> None:
    ratings = fit_ratings(synthetic_games({"p": 1000.0, "p (copy)": 1000.0}, 300, 0.4, 5), "p")
    copy = ratings["p (copy)"]
    assert copy.ci_low <= 1000.0 <= copy.ci_high
    assert abs(copy.score - 0.5) < 0.1


def test_a_player_that_wins_every_game_gets_a_finite_rating_from_the_prior() -> None:
    games = [RatedGame("a", "b", 1.0), RatedGame("b", "a", 0.0)] * 20
    ratings = fit_ratings(games, anchor="b")
    assert 400.0 < ratings["a"].elo - 1000.0 < 2000.0
    with pytest.raises(ValueError, match="prior_draws"):
        fit_ratings(games, anchor="b", prior_draws=0.0)


def test_mean_is_pinned_without_anchor_and_record_is_counted() -> None:
    games = [RatedGame("a", "b", 1.0), RatedGame("b", "a", 0.5), RatedGame("a", "b", 0.0)]
    ratings = fit_ratings(games, anchor=None, anchor_elo=1500.0)
    assert ratings["a"].elo + ratings["b"].elo == pytest.approx(3000.0)
    a = ratings["a"]
    assert (a.wins, a.draws, a.losses) == (1, 1, 1)
    assert a.first_player_score == pytest.approx(0.5)
    assert a.second_player_score == pytest.approx(0.5)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="not linked"):
        fit_ratings([RatedGame("a", "b", 1.0), RatedGame("c", "d", 0.5)])
    with pytest.raises(ValueError, match="anchor"):
        fit_ratings([RatedGame("a", "b", 1.0)], anchor="uct-1000")
    with pytest.raises(ValueError, match=r"0, 0\.5 or 1"):
        fit_ratings([RatedGame("a", "b", 0.7)])


def test_elo_score_conversions_are_inverse() -> None:
    for diff in (-300.0, 0.0, 120.0):
        assert elo_difference(expected_score(diff)) == pytest.approx(diff)


def stream(p_win: float, p_draw: float, seed: int):
    rng = np.random.default_rng(seed)
    while True:
        u = rng.random()
        yield 1.0 if u < p_win else 0.5 if u < p_win + p_draw else 0.0


def run_sprt(p_win: float, p_draw: float, seed: int, config: SPRTConfig) -> tuple[str | None, int]:
    counts = {1.0: 0, 0.5: 0, 0.0: 0}
    for n, score in enumerate(stream(p_win, p_draw, seed), start=1):
        counts[score] += 1
        result = sprt(counts[1.0], counts[0.5], counts[0.0], config)
        if result.decision or n >= 20000:
            return result.decision, n
    raise AssertionError("unreachable")


def test_sprt_accepts_h1_for_a_clearly_stronger_player() -> None:
    config = SPRTConfig(elo0=0.0, elo1=50.0)
    for seed in range(5):
        decision, n = run_sprt(0.55, 0.2, seed, config)  # about +105 Elo
        assert decision == "H1"
        assert n < 2000


def test_sprt_accepts_h0_for_equal_players() -> None:
    config = SPRTConfig(elo0=0.0, elo1=50.0)
    for seed in range(5):
        decision, _ = run_sprt(0.35, 0.3, seed, config)
        assert decision == "H0"


def test_sprt_is_undecided_early_and_checks_its_config() -> None:
    assert sprt(1, 0, 0, SPRTConfig()).decision is None
    assert sprt(0, 1, 0, SPRTConfig()).decision is None
    with pytest.raises(ValueError, match="elo0 < elo1"):
        SPRTConfig(elo0=5.0, elo1=0.0)
    with pytest.raises(ValueError, match="alpha"):
        SPRTConfig(alpha=0.0)
