"""The game contract of DESIGN.md, checked the same way for every game made by ``games.make``.

Hypothesis draws a seed and a length; the seed picks uniformly random legal moves, so every
drawn sequence is a legal game prefix or (when long enough) a whole game.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ultimate_rl.games import (
    GAMES,
    Game,
    GameOverError,
    IllegalActionError,
    UnknownGameError,
    kernels,
    layout,
    make,
    make_from_config,
)
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.games.symmetry import board_symmetries, with_relabelling

CONFIGS = {name: (name, {}) for name in GAMES} | {  # every registered game, and more sizes
    "tictactoe4": ("tictactoe", {"size": 4}),
    "tictactoe5": ("tictactoe", {"size": 5}),
    "tictactoe4k4": ("tictactoe", {"size": 4, "k": 4}),
    "uttt_threats": ("uttt", {"threat_planes": True}),
    "uttt_strategy": ("uttt", {"threat_planes": True, "strategy_planes": True}),
}
GAME_OBJECTS = {key: make(name, **options) for key, (name, options) in CONFIGS.items()}
ALL = pytest.mark.parametrize("key", list(CONFIGS))
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
LENGTHS = st.integers(min_value=0, max_value=90)  # 90 > 81: every game can run to its end
EXAMPLES = settings(max_examples=25, deadline=None)


def play(game: Game, seed: int, length: int) -> tuple[list[np.ndarray], list[int]]:
    """The states visited (start included) and the actions played: up to ``length`` random moves."""
    rng = np.random.default_rng(seed)
    states = [game.initial_state()]
    actions: list[int] = []
    while len(actions) < length and not game.is_terminal(states[-1]):
        actions.append(int(rng.choice(game.legal_actions(states[-1]))))
        states.append(game.apply(states[-1], actions[-1]))
    return states, actions


def check_position(game: Game, state: np.ndarray) -> None:
    """Invariants of one position, on their own."""
    before = state.copy()
    mask = game.legal_mask(state)
    assert mask.dtype == bool and mask.shape == (game.num_actions,)
    assert game.legal_actions(state).tolist() == np.flatnonzero(mask).tolist()
    assert game.is_terminal(state) == (not mask.any())
    result = game.returns(state)
    assert result in (-1.0, 0.0, 1.0)
    if not game.is_terminal(state):
        assert result == 0.0 and game.winner(state) is None
    else:
        assert game.winner(state) == {1.0: 0, -1.0: 1, 0.0: None}[result]
    planes = game.encode(state)
    assert planes.shape == game.observation_shape and planes.dtype == np.float32
    assert np.isfinite(planes).all()
    assert isinstance(game.render(state), str)
    assert np.array_equal(state, before)  # nothing above may write to the state


@ALL
@EXAMPLES
@given(seed=SEEDS, length=LENGTHS)
@example(seed=0, length=90)
def test_random_sequences_keep_the_invariants(key: str, seed: int, length: int) -> None:
    game = GAME_OBJECTS[key]
    states, actions = play(game, seed, length)
    assert states[0][layout.MOVES] == 0 and game.current_player(states[0]) == 0
    for before, action, after in zip(states[:-1], actions, states[1:], strict=True):
        copy = before.copy()
        assert np.array_equal(game.apply(before, action), after)  # same move, same result
        assert np.array_equal(before, copy)  # apply never mutates its input
        assert game.current_player(after) == 1 - game.current_player(before)
        assert after[layout.MOVES] == before[layout.MOVES] + 1 and after[layout.LAST] == action
        pieces = [sum(o >= 0 for o in game.picture(s).owners) for s in (before, after)]
        assert pieces[1] == pieces[0] + 1  # every move puts one piece on the board
    for state in states:
        check_position(game, state)
    if game.is_terminal(states[-1]):
        with pytest.raises(GameOverError):
            game.apply(states[-1], int(actions[-1]))


@ALL
@EXAMPLES
@given(seed=SEEDS, length=LENGTHS)
@example(seed=1, length=90)
def test_symmetries_commute_with_play(key: str, seed: int, length: int) -> None:
    """Transforming a position, its legal mask, its outcome and its planes commute: playing the
    transformed moves gives, at every step, the transformed mask and planes and the same result.
    Checked for every symmetry a game lists, relabellings (numerical n -> 10 - n) included."""
    game = GAME_OBJECTS[key]
    states, actions = play(game, seed, length)
    for sym in game.symmetries:
        moved = game.initial_state()
        for step, state in enumerate(states):
            if step > 0:
                moved = game.apply(moved, int(sym.actions([actions[step - 1]])[0]))
            assert game.returns(moved) == game.returns(state)
            assert game.is_terminal(moved) == game.is_terminal(state)
            assert np.array_equal(game.legal_mask(moved), sym.policy(game.legal_mask(state)))
            assert np.array_equal(game.encode(moved), sym.planes(game.encode(state)))


@ALL
def test_distinct_symmetries_forming_a_group(key: str) -> None:
    """The identity first, and composing two of them acts on planes as the one whose action
    permutation is the product (each game's own tests check how many it has)."""
    game = GAME_OBJECTS[key]
    perms = [sym.action_perm for sym in game.symmetries]
    identity = np.arange(game.num_actions)
    for perm in perms:
        assert np.array_equal(np.sort(perm), identity)  # a permutation of the actions
    index = {tuple(perm.tolist()): k for k, perm in enumerate(perms)}
    assert len(index) == len(perms) and index[tuple(identity.tolist())] == 0
    planes = np.random.default_rng(0).random(game.observation_shape)  # every entry tells apart
    assert np.array_equal(game.symmetries[0].planes(planes), planes)
    for p in game.symmetries:
        for q in game.symmetries:
            product = game.symmetries[index[tuple(q.action_perm[p.action_perm].tolist())]]
            assert np.array_equal(product.planes(planes), q.planes(p.planes(planes)))


def test_relabelling_must_be_a_permutation() -> None:
    board = board_symmetries(3, np.arange(9))
    with pytest.raises(ValueError, match=r"action_perm must hold each of 0\.\.8 exactly once"):
        with_relabelling(board, "bad", [0] * 9, [0, 1, 2])
    with pytest.raises(ValueError, match=r"channel_perm must hold each of 0\.\.2 exactly once"):
        with_relabelling(board, "bad", np.arange(9), [0, 0, 2])
    with pytest.raises(ValueError, match="at least one symmetry"):
        with_relabelling([], "bad", np.arange(9), [0, 1, 2])


@ALL
def test_initial_state_is_fresh_and_well_formed(key: str) -> None:
    game = GAME_OBJECTS[key]
    state = game.initial_state()
    assert state.dtype == layout.STATE_DTYPE and state.shape == (layout.STATE_LEN,)
    assert state[layout.LAST] == -1 and not game.is_terminal(state)
    state[:] = 7
    assert not np.array_equal(game.initial_state(), state)
    assert game.legal_actions(game.initial_state()).size > 0


@ALL
def test_illegal_and_out_of_range_actions_raise(key: str) -> None:
    game = GAME_OBJECTS[key]
    first = int(game.legal_actions(game.initial_state())[0])
    state = game.apply(game.initial_state(), first)
    while game.legal_mask(state)[first]:  # a column of Connect Four takes several pieces
        state = game.apply(state, first)
    for bad in (first, game.num_actions, -1):
        with pytest.raises(IllegalActionError, match=f"illegal action {bad} ") as err:
            game.apply(state, bad)
        assert err.value.legal_actions == game.legal_actions(state).tolist()


def test_unknown_game_name_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownGameError) as err:
        make("chess")
    message = str(err.value)
    assert "chess" in message
    assert all(name in message for name in GAMES)
    assert list(GAMES) == list(GAME_NAMES)  # the registry's order, which is also the ids'
    assert [GAMES[name].game_id for name in GAME_NAMES] == list(range(len(GAME_NAMES)))
    assert [k.game_id for k in kernels.GAMES] == list(range(len(GAME_NAMES)))


@pytest.mark.parametrize(
    ("name", "options", "named"),
    [
        ("uttt", {"size": 3}, "size"),
        ("numerical_ttt", {"colour": "red"}, "colour"),
        ("tictactoe", {"sides": 3}, "sides"),
        ("tictactoe", {"size": 6}, "size"),
        ("tictactoe", {"size": 3, "k": 4}, "k"),
    ],
)
def test_unknown_or_bad_option_raises(name: str, options: dict, named: str) -> None:
    with pytest.raises(UnknownGameError, match=named):
        make(name, **options)


def test_a_game_is_made_from_its_name_or_its_config_node() -> None:
    assert make_from_config("uttt").name == "uttt"
    four = make_from_config({"name": "tictactoe", "size": 4, "k": 4})  # as config.yaml has it
    assert (four.size, four.k) == (4, 4)
    with pytest.raises(UnknownGameError, match="chess"):
        make_from_config({"name": "chess"})


def test_every_game_has_one_entry_in_the_kernel_table() -> None:
    ids = [kernels.game_id for kernels in kernels.GAMES]
    assert sorted(ids) == sorted({game.game_id for game in GAME_OBJECTS.values()})
    for game in GAME_OBJECTS.values():  # each game's playout, reached through the table
        assert kernels.random_playout(game.initial_state()) in (-1.0, 0.0, 1.0)
