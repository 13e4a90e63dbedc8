"""Connect Four: move counts, rules against a plain-Python referee, the solver against minimax."""

from __future__ import annotations

from functools import cache

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import ultimate_rl  # noqa: F401  (registers the env IDs)
from ultimate_rl.games import (
    GameOverError,
    IllegalActionError,
    UnknownGameError,
    UnsolvableGameError,
    kernels,
    layout,
    make,
    solve,
)
from ultimate_rl.games import connect_four_solver as solver
from ultimate_rl.games.kernels import connect_four as kc

ROWS, COLS = 6, 7
Grid = tuple[tuple[int, ...], ...]  # ROWS rows, row 0 at the TOP: 0 empty, 1 first player, 2 second

# kernels.perft counts a game that ends before the last ply as 0 sequences; the published figure
# for depth 8, 5686266, counts it as one (13032 games are won at ply 7).
PERFT = [7, 49, 343, 2401, 16807, 117649, 823536, 5673234]
PERFT_ENDED_AS_ONE = [7, 49, 343, 2401, 16807, 117649, 823536, 5686266]
DRAWN_GAME = "000000111111222222433333344444555555666666"  # fills the board without four


# --- an independent referee over a 2-D list board --------------------------------------------
def drop_row(grid: list[list[int]] | Grid, col: int) -> int:
    """Row (from the top) where a stone dropped in ``col`` lands; -1 if the column is full."""
    for row in range(ROWS - 1, -1, -1):
        if grid[row][col] == 0:
            return row
    return -1


def makes_four(grid: list[list[int]] | Grid, row: int, col: int) -> bool:
    """Whether the stone on (row, col) is part of four in a row of its colour."""
    me = grid[row][col]
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * dr, col + sign * dc
            while 0 <= r < ROWS and 0 <= c < COLS and grid[r][c] == me:
                run += 1
                r, c = r + sign * dr, c + sign * dc
        if run >= 4:
            return True
    return False


def any_four(grid: list[list[int]] | Grid) -> int:
    """1 or 2 if that player has four in a row anywhere, else 0."""
    for row in range(ROWS):
        for col in range(COLS):
            if grid[row][col] and makes_four(grid, row, col):
                return grid[row][col]
    return 0


def replay(actions: list[int] | str) -> list[list[int]]:
    """The board after dropping stones in ``actions``, the players alternating from player 1."""
    grid = [[0] * COLS for _ in range(ROWS)]
    for ply, col in enumerate(actions):
        grid[drop_row(grid, int(col))][int(col)] = 1 + ply % 2
    return grid


def referee_perft(grid: list[list[int]], player: int, depth: int, ended_as_one: bool) -> int:
    """Move sequences of length ``depth``; a game won sooner counts 1 or 0 (``ended_as_one``)."""
    if depth == 0:
        return 1
    total = 0
    for col in range(COLS):
        row = drop_row(grid, col)
        if row < 0:
            continue
        grid[row][col] = player
        if depth == 1:
            total += 1
        elif makes_four(grid, row, col):
            total += ended_as_one
        else:
            total += referee_perft(grid, 3 - player, depth - 1, ended_as_one)
        grid[row][col] = 0
    return total


@cache
def minimax(grid: Grid, player: int) -> int:
    """Value for ``player`` (1 or 2, to move) by plain negamax: no pruning, only memoised."""
    values = minimax_action_values(grid, player)
    legal = [v for v in values if v != solver.ILLEGAL]
    return max(legal) if legal else 0


def minimax_action_values(grid: Grid, player: int) -> list[int]:
    values = []
    for col in range(COLS):
        row = drop_row(grid, col)
        if row < 0:
            values.append(solver.ILLEGAL)
            continue
        child = tuple(
            tuple(player if (r, c) == (row, col) else grid[r][c] for c in range(COLS))
            for r in range(ROWS)
        )
        if makes_four(child, row, col):
            values.append(1)
        elif all(child[0]):
            values.append(0)
        else:
            values.append(-minimax(child, 3 - player))
    return values


def random_play(game, rng: np.random.Generator, empty: int) -> tuple[np.ndarray, list[int]]:
    """A position still in play with ``empty`` empty cells, by random moves (retrying games that
    end on the way), and the moves that reach it."""
    while True:
        state, actions = game.initial_state(), []
        while not game.is_terminal(state) and kc.NUM_CELLS - len(actions) > empty:
            actions.append(int(rng.choice(game.legal_actions(state))))
            state = game.apply(state, actions[-1])
        if not game.is_terminal(state):
            return state, actions


GAME = make("connect_four")


# --- move counts ------------------------------------------------------------------------------
def test_perft_from_the_start() -> None:
    start = GAME.initial_state()
    assert [kernels.perft(start, depth) for depth in range(1, 9)] == PERFT


@pytest.mark.parametrize("depth", range(1, 6))
def test_perft_agrees_with_the_referee(depth: int) -> None:
    grid = [[0] * COLS for _ in range(ROWS)]
    assert referee_perft(grid, 1, depth, ended_as_one=False) == PERFT[depth - 1]
    assert referee_perft(grid, 1, depth, ended_as_one=True) == PERFT_ENDED_AS_ONE[depth - 1]


@pytest.mark.slow
def test_referee_perft_8_under_both_conventions() -> None:
    """About 8 s each in plain Python: 5686266 is kernels.perft's 5673234 plus the ply-7 wins."""
    grid = [[0] * COLS for _ in range(ROWS)]
    assert referee_perft(grid, 1, 8, ended_as_one=False) == PERFT[7]
    assert referee_perft(grid, 1, 8, ended_as_one=True) == PERFT_ENDED_AS_ONE[7]


# --- rules ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("moves", "winner"),
    [
        ([0, 1, 0, 1, 0, 1, 0], 0),  # vertical
        ([0, 0, 1, 1, 2, 2, 3], 0),  # horizontal along the bottom
        ([0, 1, 1, 2, 3, 2, 2, 3, 6, 3, 3], 0),  # rising diagonal
        ([6, 5, 5, 4, 3, 4, 4, 3, 0, 3, 3], 0),  # falling diagonal
        ([6, 1, 6, 1, 5, 1, 5, 1], 1),  # the second player, vertical
        ([6, 0, 6, 1, 5, 2, 0, 3], 1),  # the second player, horizontal
    ],
)
def test_four_in_a_row_wins_for_the_player_who_made_it(moves: list[int], winner: int) -> None:
    state = GAME.apply_sequence(moves[:-1])
    assert not GAME.is_terminal(state) and any_four(replay(moves[:-1])) == 0
    state = GAME.apply(state, moves[-1])
    assert any_four(replay(moves)) == 1 + winner
    assert GAME.winner(state) == winner and GAME.returns(state) == (1.0 if winner == 0 else -1.0)
    assert state[layout.STATUS] == layout.FIRST_WON + winner
    assert not GAME.legal_mask(state).any() and GAME.legal_actions(state).size == 0
    with pytest.raises(GameOverError):
        GAME.apply(state, 4)


def test_a_full_column_is_illegal() -> None:
    state = GAME.apply_sequence([0] * 6)
    assert GAME.legal_actions(state).tolist() == [1, 2, 3, 4, 5, 6]
    with pytest.raises(IllegalActionError, match="illegal action 0 "):
        GAME.apply(state, 0)


def test_a_full_board_without_four_is_a_draw() -> None:
    grid = replay(DRAWN_GAME)
    assert any_four(grid) == 0 and all(all(row) for row in grid)
    state = GAME.apply_sequence([int(c) for c in DRAWN_GAME[:-1]])
    assert not GAME.is_terminal(state)
    state = GAME.apply(state, int(DRAWN_GAME[-1]))
    assert state[layout.STATUS] == layout.DRAW and GAME.winner(state) is None
    assert GAME.returns(state) == 0.0 and not GAME.legal_mask(state).any()


@pytest.mark.parametrize("seed", range(20))
def test_random_games_agree_with_the_referee(seed: int) -> None:
    rng = np.random.default_rng(seed)
    state, actions = GAME.initial_state(), []
    while not GAME.is_terminal(state):
        grid = replay(actions)
        assert GAME.legal_actions(state).tolist() == [c for c in range(COLS) if grid[0][c] == 0]
        owners = [[kc.cell_owner(state, r, c) for c in range(COLS)] for r in range(ROWS)]
        assert owners == [[v - 1 for v in row] for row in grid]
        planes = GAME.encode(state)
        mover = GAME.current_player(state)
        assert np.array_equal(planes[0], np.array(grid) == 1 + mover)
        assert np.array_equal(planes[1], np.array(grid) == 2 - mover)
        assert (planes[2] == (1.0 if mover == 0 else 0.0)).all()
        actions.append(int(rng.choice(GAME.legal_actions(state))))
        state = GAME.apply(state, actions[-1])
    winner = any_four(replay(actions))
    assert GAME.winner(state) == (winner - 1 if winner else None)
    assert winner or len(actions) == kc.NUM_CELLS


def test_the_bitboard_halves_round_trip_every_cell() -> None:
    state = GAME.initial_state()
    for bit in range(kc.COLUMN_BITS * COLS):
        kc.set_board(state, 1, np.int64(1) << bit)
        assert kc.board(state, 1) == 1 << bit
    kc.set_board(state, 0, np.int64(2**49 - 1))
    assert kc.board(state, 0) == 2**49 - 1


def test_random_playout_is_seeded_and_leaves_the_state_alone() -> None:
    state = GAME.apply_sequence([3, 3, 2])
    before = state.copy()
    kernels.seed(7)
    first = [kernels.random_playout(state) for _ in range(200)]
    kernels.seed(7)
    assert [kernels.random_playout(state) for _ in range(200)] == first
    assert set(first) <= {-1.0, 0.0, 1.0} and len(set(first)) > 1
    assert np.array_equal(state, before)
    last = GAME.apply_sequence([int(c) for c in DRAWN_GAME[:-1]])
    assert kernels.random_playout(last) == 0.0  # one cell left: its move draws


def test_mirror_commutes_with_play() -> None:
    identity, mirror = GAME.symmetries
    assert identity.action_perm.tolist() == list(range(COLS))
    assert mirror.action_perm.tolist() == [6, 5, 4, 3, 2, 1, 0]
    rng = np.random.default_rng(3)
    state, mirrored = GAME.initial_state(), GAME.initial_state()
    while not GAME.is_terminal(state):
        assert np.array_equal(GAME.encode(mirrored), GAME.encode(state)[..., ::-1])
        assert np.array_equal(GAME.encode(mirrored), mirror.planes(GAME.encode(state)))
        assert np.array_equal(GAME.legal_mask(mirrored), mirror.policy(GAME.legal_mask(state)))
        action = int(rng.choice(GAME.legal_actions(state)))
        state = GAME.apply(state, action)
        mirrored = GAME.apply(mirrored, int(mirror.actions([action])[0]))
    assert GAME.returns(mirrored) == GAME.returns(state)


def test_text_names_and_picture() -> None:
    assert [GAME.action_to_string(a) for a in range(COLS)] == list("abcdefg")
    assert [GAME.string_to_action(t) for t in "abcdefg"] == list(range(COLS))
    assert [GAME.string_to_action(str(n)) for n in range(1, 8)] == list(range(COLS))
    assert GAME.string_to_action(" D ") == 3
    for bad in ("h", "0", "8", "", "ab", "d4"):
        with pytest.raises(UnknownGameError, match=r"a\.\.g"):
            GAME.string_to_action(bad)
    with pytest.raises(UnknownGameError):
        GAME.action_to_string(7)
    picture = GAME.render(GAME.apply_sequence([3, 3, 4]))
    assert picture.splitlines() == [
        "a b c d e f g",
        *[". . . . . . ."] * 4,
        ". . . O . . .",
        ". . . X X . .",
        "O to move",
    ]


def test_the_env_id_works() -> None:
    env = gym.make("ultimate_rl/ConnectFour-v0")
    obs, _ = env.reset(seed=0)
    assert obs["observation"].shape == (3, ROWS, COLS)
    assert obs["action_mask"].tolist() == [1] * COLS
    obs, reward, terminated, truncated, _ = env.step(3)
    assert reward == 0.0 and not terminated and not truncated
    check_env(env.unwrapped)
    env.close()


# --- the solver -------------------------------------------------------------------------------
def as_grid(actions: list[int]) -> Grid:
    return tuple(tuple(row) for row in replay(actions))


@pytest.mark.parametrize("seed", range(4))
def test_solver_agrees_with_minimax(seed: int) -> None:
    """Nine positions per seed with 1 to 9 empty cells: every action's value, and ``solve``."""
    rng = np.random.default_rng(seed)
    for empty in range(1, 10):
        state, actions = random_play(GAME, rng, empty)
        player = 1 + len(actions) % 2
        expected = minimax_action_values(as_grid(actions), player)
        assert solver.action_values(state).tolist() == expected
        value, best = solve(GAME, state)
        assert value == minimax(as_grid(actions), player)
        assert best.tolist() == [c for c in range(COLS) if expected[c] == value]


def immediate_wins(grid: Grid, player: int) -> list[int]:
    """The columns where ``player`` would make four at once."""
    wins = []
    for col in range(COLS):
        row = drop_row(grid, col)
        if row >= 0:
            board = [list(r) for r in grid]
            board[row][col] = player
            if makes_four(board, row, col):
                wins.append(col)
    return wins


def test_solver_takes_an_immediate_win_and_blocks_an_immediate_loss() -> None:
    """Seeded positions with 12-16 empty cells where the mover can win at once, or where the
    opponent threatens one cell the mover cannot win first: any other column loses."""
    rng = np.random.default_rng(0)
    won = blocked = 0
    while won < 5 or blocked < 5:
        state, actions = random_play(GAME, rng, int(rng.integers(12, 17)))
        grid, player = as_grid(actions), 1 + len(actions) % 2
        values = solver.action_values(state)
        mine, theirs = immediate_wins(grid, player), immediate_wins(grid, 3 - player)
        if mine:
            won += 1
            assert all(values[c] == 1 for c in mine) and solve(GAME, state)[0] == 1
        elif len(theirs) == 1:
            blocked += 1
            others = [c for c in range(COLS) if c != theirs[0] and values[c] != solver.ILLEGAL]
            assert all(values[c] == -1 for c in others)
            assert theirs[0] in solve(GAME, state)[1].tolist()


def test_solver_bounds_and_finished_games() -> None:
    with pytest.raises(UnsolvableGameError, match=f"MAX_EMPTY_CELLS = {solver.MAX_EMPTY_CELLS}"):
        solver.action_values(GAME.initial_state())
    won = GAME.apply_sequence([0, 1, 0, 1, 0, 1, 0])  # finished early: nothing left to solve
    assert solver.action_values(won).tolist() == [solver.ILLEGAL] * COLS
    value, best = solve(GAME, won)
    assert value == -1 and best.size == 0
    drawn = GAME.apply_sequence([int(c) for c in DRAWN_GAME])
    assert solve(GAME, drawn)[0] == 0
    with pytest.raises(UnsolvableGameError, match="MAX_EMPTY_CELLS"):
        solver.labelled_positions(1, max_empty=solver.MAX_EMPTY_CELLS + 1)
    with pytest.raises(ValueError, match="min_empty"):
        solver.labelled_positions(1, min_empty=10, max_empty=9)


def test_labelled_positions_are_seeded_and_have_the_requested_empties() -> None:
    states, values = solver.labelled_positions(12, min_empty=12, max_empty=16, seed=5)
    again_states, again_values = solver.labelled_positions(12, min_empty=12, max_empty=16, seed=5)
    assert np.array_equal(states, again_states) and np.array_equal(values, again_values)
    other, _ = solver.labelled_positions(12, min_empty=12, max_empty=16, seed=6)
    assert not np.array_equal(states, other)
    assert states.shape == (12, layout.STATE_LEN) and values.shape == (12, COLS)
    assert values.dtype == np.int64
    empties = kc.NUM_CELLS - states[:, layout.MOVES]
    assert ((empties >= 12) & (empties <= 16)).all()
    for state, row in zip(states, values, strict=True):
        assert not GAME.is_terminal(GAME.check_state(state))
        legal = GAME.legal_mask(state)
        assert ((row == solver.ILLEGAL) == ~legal).all() and set(row[legal]) <= {-1, 0, 1}
    exact, _ = solver.labelled_positions(3, min_empty=14, max_empty=14, seed=1)
    assert (kc.NUM_CELLS - exact[:, layout.MOVES] == 14).all()


def test_exact_positions_are_seeded_late_and_decisive() -> None:
    """The evaluation's test set: 12-16 empty cells, the same for a seed, and in every one some
    legal column keeps the value and some loses it (so a random mover scores well under 1)."""
    first, again = GAME.exact_positions(30, seed=5), GAME.exact_positions(30, seed=5)
    assert [s.tobytes() for s in first] == [s.tobytes() for s in again]
    assert len({s.tobytes() for s in first}) == 30
    for state in first:
        assert 12 <= solver.empty_cells(state) <= 16 and not GAME.is_terminal(state)
        values = GAME.exact_action_values(state)
        legal = values[values != solver.ILLEGAL]
        assert legal.min() < legal.max()
    assert GAME.exact_action_values(GAME.initial_state()) is None  # too early to solve
