"""Batched self-play: targets, options and reproducibility, with a network-free evaluator."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ultimate_rl.games import layout, make
from ultimate_rl.search import BatchedSearch, SearchConfig
from ultimate_rl.selfplay import worker as worker_module
from ultimate_rl.selfplay.parallel import split_games
from ultimate_rl.selfplay.schema import (
    PlayoutCapSettings,
    RandomOpeningSettings,
    ResignSettings,
    SelfPlaySettings,
)
from ultimate_rl.selfplay.targets import ALL_TARGETS
from ultimate_rl.selfplay.worker import SelfPlayStats, SelfPlayWorker


def uniform(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(masks.shape, np.float32), np.zeros(len(masks), np.float32)


def play(games: int = 12, seed: int = 0, **settings: object):
    game = make("tictactoe")
    options = {"parallel_games": 5, "games_per_iteration": games, **settings}
    worker = SelfPlayWorker(game, SearchConfig(num_simulations=8), SelfPlaySettings(**options))
    return game, worker.play(uniform, games, np.random.default_rng(seed))


def test_targets_follow_the_rules_and_each_movers_result():
    game, data = play(games=12)
    stats = data.stats
    assert stats.games == 12
    assert stats.first_wins + stats.draws + stats.second_wins == 12
    assert len(data.values) == stats.positions == stats.moves
    # policy targets live on the legal moves of the recorded states only
    masks = np.stack([game.legal_mask(s) for s in data.states])
    assert np.allclose(data.policies.sum(axis=1), 1.0)
    assert not (data.policies[~masks] > 0).any()
    # replay each game from the start: every game starts at the empty board (all-legal mask)
    starts = np.flatnonzero(masks.sum(axis=1) == game.num_actions)
    assert len(starts) == 12
    # a game's value targets alternate in sign (the movers alternate), or are all 0 (draw)
    for begin, end in zip(starts, [*starts[1:], len(data.values)], strict=True):
        values = data.values[begin:end]
        assert np.all(values[1:] == -values[:-1])


def test_selfplay_records_every_declared_target_in_its_dtype_and_shape():
    game, data = play(games=3)
    assert list(data.targets) == [t.name for t in ALL_TARGETS]
    for target in ALL_TARGETS:
        array = getattr(data, target.name)  # each target reads as the attribute of its name
        assert array is data.targets[target.name] and array.dtype == target.dtype
        assert array.shape == (len(data.states), *target.shape(game))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = data.nothing


def test_same_seed_same_games_other_seed_other_games():
    _, a = play(seed=3)
    _, b = play(seed=3)
    _, c = play(seed=4)
    assert np.array_equal(a.policies, b.policies) and np.array_equal(a.values, b.values)
    assert not (len(a.values) == len(c.values) and np.array_equal(a.policies, c.policies))


@pytest.mark.parametrize("fraction_full", [0.0, 1.0])
def test_playout_cap_marks_cheap_searches(fraction_full: float):
    _, data = play(playout_cap=PlayoutCapSettings(fraction_full=fraction_full, fast_simulations=2))
    assert data.full_search.all() == (fraction_full == 1.0)
    assert data.full_search.any() == (fraction_full == 1.0)
    expected_sims = 8 if fraction_full == 1.0 else 2
    assert data.stats.simulations == expected_sims * data.stats.moves


def test_resignation_ends_games_and_play_on_games_measure_false_positives():
    # threshold above any value: the mover at move `min_moves` (the first player) resigns
    always = {"enabled": True, "threshold": 2.0, "min_moves": 2}
    _, resigned = play(resign=ResignSettings(**always, disabled_fraction=0.0))
    stats = resigned.stats
    assert stats.resignations == stats.games == stats.second_wins == 12
    assert stats.moves == 2 * 12
    # the resigner's own position is a loss target: value -1 for the first player at move 2
    resign_rows = np.flatnonzero(resigned.states[:, layout.MOVES] == 2)
    assert np.all(resigned.values[resign_rows] == -1)

    _, played_on = play(resign=ResignSettings(**always, disabled_fraction=1.0))
    stats = played_on.stats
    assert stats.resignations == 0
    assert stats.resign_checks == stats.games
    assert stats.resign_false == stats.first_wins + stats.draws


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match=r"selfplay\.playout_cap\.fraction_full"):
        PlayoutCapSettings(fraction_full=1.5)
    with pytest.raises(ValueError, match=r"selfplay\.resign\.disabled_fraction"):
        ResignSettings(disabled_fraction=-0.1)
    with pytest.raises(ValueError, match="parallel_games"):
        SelfPlaySettings(parallel_games=0)


def test_split_games_shares_evenly():
    assert split_games(10, 3) == [4, 3, 3]
    assert sum(split_games(7, 4)) == 7


def test_recorded_states_are_real_positions():
    game, data = play(games=4)
    # the first position of the first game is the empty board, player 0 to move
    assert np.array_equal(data.states[0], game.initial_state())
    # within a game, each recorded state is the previous one plus the move it records as LAST
    starts = [*np.flatnonzero(data.states[:, layout.MOVES] == 0), len(data.states)]
    assert len(starts) == 4 + 1
    for begin, end in itertools.pairwise(starts):
        for before, after in itertools.pairwise(data.states[begin:end]):
            assert np.array_equal(game.apply(before, int(after[layout.LAST])), after)


def test_random_openings_start_games_after_unrecorded_random_moves():
    game, plain = play(games=12, seed=5)
    _, opened = play(
        games=12, seed=5, random_opening=RandomOpeningSettings(fraction=1.0, max_plies=4)
    )
    # without openings every game's first recorded state is the start (MOVES == 0)
    assert int((plain.states[:, layout.MOVES] == 0).sum()) == 12
    # with them, some games start later: fewer recorded start positions, all still ongoing
    starts = int((opened.states[:, layout.MOVES] == 0).sum())
    assert starts < 12
    assert opened.stats.games == 12
    assert (opened.states[:, layout.STATUS] == layout.ONGOING).all()
    # every recorded state is reachable: its marks count equals its move counter
    for state in opened.states:
        assert game.legal_mask(state).sum() == game.num_actions - int(state[layout.MOVES])


def lowest_cell_first(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A prior all but certain of the lowest legal cell: the search plays it."""
    logits = np.where(masks, -20.0 * np.arange(masks.shape[1]), 0.0).astype(np.float32)
    return logits, np.zeros(len(masks), np.float32)


def first_recorded_owners(
    one_sided: float, max_plies: int
) -> tuple[list[list[int]], SelfPlayStats]:
    """Cell owners (0, 1, -1 free) of each game's first recorded position, and the stats."""
    game = make("tictactoe")
    settings = SelfPlaySettings(
        parallel_games=5,
        games_per_iteration=24,
        temperature_moves=0,
        random_opening=RandomOpeningSettings(1.0, max_plies, one_sided),
    )
    search = SearchConfig(num_simulations=8, dirichlet_fraction=0.0)
    worker = SelfPlayWorker(game, search, settings)
    data = worker.play(lowest_cell_first, 24, np.random.default_rng(7))

    # a game's first recorded position is not its predecessor plus the move it records as LAST
    def follows(before: np.ndarray, after: np.ndarray) -> bool:
        last = int(after[layout.LAST])
        return (
            last >= 0
            and game.legal_mask(before)[last]
            and np.array_equal(game.apply(before, last), after)
        )

    states = data.states
    firsts = [0] + [i for i in range(1, len(states)) if not follows(states[i - 1], states[i])]
    assert len(firsts) == data.stats.games == 24
    return [game.picture(data.states[i]).owners for i in firsts], data.stats


def search_could_have_played(owners: list[int], side: int) -> bool:
    """Whether ``side``'s marks can be those of a player who always took the lowest free cell:
    every cell below its highest mark is taken."""
    mine = [cell for cell, owner in enumerate(owners) if owner == side]
    return all(owner >= 0 for owner in owners[: max(mine, default=0)])


def test_one_sided_openings_play_the_searchs_moves_for_one_side():
    one_sided, _ = first_recorded_owners(one_sided=1.0, max_plies=6)
    assert all(
        search_could_have_played(owners, 0) or search_could_have_played(owners, 1)
        for owners in one_sided
    )
    assert sum(owner >= 0 for owners in one_sided for owner in owners) > 24  # openings were played
    # random moves on both sides break that rule in some game (the check can fail)
    both_random, _ = first_recorded_owners(one_sided=0.0, max_plies=6)
    assert not all(
        search_could_have_played(owners, 0) or search_could_have_played(owners, 1)
        for owners in both_random
    )


def test_a_one_sided_opening_stops_before_a_move_that_ends_the_game():
    # openings up to the whole game: some would end it; each game still records its last move
    _, stats = first_recorded_owners(one_sided=1.0, max_plies=9)
    assert stats.games == 24 and stats.positions >= 24
    assert stats.moves > stats.positions  # the openings' moves were played, not recorded


def test_one_sided_openings_can_record_the_searching_sides_moves_with_their_search_value():
    game = make("tictactoe")

    def lowest_cell_worth_half(planes: np.ndarray, masks: np.ndarray):
        logits, _ = lowest_cell_first(planes, masks)
        return logits, np.full(len(masks), 0.5, np.float32)  # root values far from any result

    def run(record: bool):
        opening = RandomOpeningSettings(1.0, 6, 1.0, record_searching_side=record)
        settings = SelfPlaySettings(
            parallel_games=5, games_per_iteration=24, temperature_moves=0, random_opening=opening
        )
        worker = SelfPlayWorker(
            game, SearchConfig(num_simulations=8, dirichlet_fraction=0.0), settings
        )
        return worker.play(lowest_cell_worth_half, 24, np.random.default_rng(7))

    plain, recorded = run(False), run(True)
    assert recorded.stats.moves == plain.stats.moves  # the same games, more of them recorded
    # the games finish in the same order; in each, the opening's positions come first
    matched, extra = 0, 0
    for state, value, root in zip(
        recorded.states, recorded.values, recorded.root_values, strict=True
    ):
        if matched < len(plain.states) and np.array_equal(state, plain.states[matched]):
            assert value == plain.values[matched]  # recorded without the option: the result
            matched += 1
            continue
        extra += 1  # an opening move of the searching side: its search's value
        assert value == root and value not in (-1.0, 0.0, 1.0)
        assert search_could_have_played(game.picture(state).owners, int(state[layout.PLAYER]))
    assert matched == len(plain.states) and extra > 24  # every plain position, and openings


def test_openings_without_the_one_sided_option_keep_their_seeded_games():
    """Pinned from the worker before ``one_sided`` existed (270af2a): an option that is off
    must not draw from the games' random stream, or every seeded preset plays other games."""
    _, data = play(games=12, seed=5, random_opening=RandomOpeningSettings(1.0, 4, one_sided=0.0))
    assert (len(data.states), int(data.states.sum())) == (60, 7516)


def test_random_opening_settings_are_checked():
    with pytest.raises(ValueError, match=r"selfplay\.random_opening\.fraction"):
        RandomOpeningSettings(fraction=1.5)
    with pytest.raises(ValueError, match=r"selfplay\.random_opening\.one_sided"):
        RandomOpeningSettings(one_sided=-0.5)
    with pytest.raises(ValueError, match=r"selfplay\.random_opening\.max_plies"):
        RandomOpeningSettings(max_plies=-1)


def test_a_live_games_tree_survives_another_game_finishing(monkeypatch: pytest.MonkeyPatch):
    """Every search after a game's first move reuses that game's tree, also when the game moved
    to another row because a game before it finished."""
    searched: list[tuple[np.ndarray, np.ndarray]] = []

    class RecordingSearch(BatchedSearch):
        def search(self, states, *args, **kwargs):
            out = super().search(states, *args, **kwargs)
            searched.append((states[:, layout.MOVES].copy(), out.visit_counts.sum(axis=1)))
            return out

    monkeypatch.setattr(worker_module, "BatchedSearch", RecordingSearch)
    sims = 30  # greedy play picks a move with several visits, so its subtree is never empty
    game = make("tictactoe")
    settings = SelfPlaySettings(parallel_games=5, temperature_moves=0, final_temperature=0.0)
    worker = SelfPlayWorker(game, SearchConfig(num_simulations=sims), settings)
    worker.play(uniform, 12, np.random.default_rng(0))
    rows_searched = [len(moves) for moves, _ in searched]
    assert rows_searched[-1] < rows_searched[0]  # games finished and the rows were compacted
    for moves, visits in searched:
        assert (visits[moves == 0] == sims).all()
        assert (visits[moves > 0] > sims).all()  # kept subtree + this move's simulations
