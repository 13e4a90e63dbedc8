"""Ultimate Tic-Tac-Toe rules: perft, hand-built positions, encoding, errors and random playouts.

Positions are built two ways: by playing moves from the start, or with ``position`` below, which
writes the bitboards directly and decides won/closed boards with the plain-Python ``has_line``
here, independent of the kernels' lookup tables. A plain-Python reference engine (``Reference``)
replays random games and must agree with the kernels on every legal set and result.
"""

from __future__ import annotations

import numpy as np
import pytest

from ultimate_rl.games import (
    GameOverError,
    IllegalActionError,
    InvalidStateError,
    UltimateTicTacToe,
    UnknownGameError,
    kernels,
    layout,
    make,
)
from ultimate_rl.games.kernels import uttt as ku

PERFT = [81, 720, 6336, 55080, 473256, 4020960, 33782544]
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
# A full small board without a line: X O X / X O O / O X X.
DRAWN_X = [0, 2, 3, 7, 8]
DRAWN_O = [1, 4, 5, 6]


@pytest.fixture(scope="module")
def game() -> UltimateTicTacToe:
    return make("uttt")


def has_line(cells: set[int] | list[int]) -> bool:
    return any(all(c in cells for c in line) for line in LINES)


def position(
    x: dict[int, list[int]], o: dict[int, list[int]], player: int, forced: int = -1
) -> np.ndarray:
    """An ongoing state with X's and O's cells per small board, ``player`` to move and the
    ``forced`` board (-1: any open board); won and closed boards follow from the marks."""
    state = ku.initial_state()
    won = [0, 0]
    closed = 0
    for board in range(9):
        marks = [set(x.get(board, [])), set(o.get(board, []))]
        assert not marks[0] & marks[1], f"board {board}: a cell marked twice"
        for p in (0, 1):
            state[ku.X_CELLS + 9 * p + board] = sum(1 << c for c in marks[p])
            if has_line(marks[p]):
                won[p] |= 1 << board
        if won[0] >> board & 1 or won[1] >> board & 1 or len(marks[0] | marks[1]) == 9:
            closed |= 1 << board
    state[ku.WON_X], state[ku.WON_O], state[ku.CLOSED] = won[0], won[1], closed
    state[ku.FORCED] = forced
    state[layout.PLAYER] = player
    state[layout.MOVES] = sum(len(v) for v in x.values()) + sum(len(v) for v in o.values())
    return state


def open_board_actions(state: np.ndarray, boards: list[int]) -> list[int]:
    """Every empty cell of the given boards, as actions."""
    actions = []
    for board in boards:
        taken = state[ku.X_CELLS + board] | state[ku.O_CELLS + board]
        actions += [9 * board + c for c in range(9) if not taken >> c & 1]
    return actions


class Reference:
    """Plain-Python Ultimate Tic-Tac-Toe straight from the rules, to check the kernels against."""

    def __init__(self) -> None:
        self.cells: list[list[set[int]]] = [[set() for _ in range(9)] for _ in range(2)]
        self.won: list[set[int]] = [set(), set()]
        self.closed: set[int] = set()
        self.player = 0
        self.target: int | None = None  # board the mover is sent to; None: free choice
        self.status = layout.ONGOING

    def legal(self) -> list[int]:
        if self.status != layout.ONGOING:
            return []
        boards = [self.target] if self.target is not None else range(9)
        return [
            9 * b + c
            for b in boards
            if b not in self.closed
            for c in range(9)
            if c not in self.cells[0][b] | self.cells[1][b]
        ]

    def play(self, action: int) -> None:
        board, cell = divmod(action, 9)
        me = self.player
        self.cells[me][board].add(cell)
        if has_line(self.cells[me][board]):
            self.won[me].add(board)
            self.closed.add(board)
        elif len(self.cells[0][board] | self.cells[1][board]) == 9:
            self.closed.add(board)
        if has_line(self.won[me]):
            self.status = layout.FIRST_WON if me == 0 else layout.SECOND_WON
        elif len(self.closed) == 9:
            self.status = layout.DRAW
        self.target = None if cell in self.closed else cell
        self.player = 1 - me


# --- perft -------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_perft(depth: int) -> None:
    assert kernels.perft(ku.initial_state(), depth) == PERFT[depth - 1]


@pytest.mark.slow
@pytest.mark.parametrize("depth", [6, 7])
def test_perft_deep(depth: int) -> None:
    assert kernels.perft(ku.initial_state(), depth) == PERFT[depth - 1]


def test_perft_counts_finished_lines_as_zero(game: UltimateTicTacToe) -> None:
    state = position({0: [0, 1], 1: [0, 1, 2], 2: [0, 1, 2]}, {3: [0, 1, 2], 4: [0, 1]}, 0, 0)
    assert kernels.perft(state, 1) == 7  # board 0 has 7 empty cells, one of them wins the game
    assert kernels.perft(state, 2) == sum(
        len(game.legal_actions(game.apply(state, a))) for a in game.legal_actions(state)
    )


# --- rules on hand-built positions -----------------------------------------------------------


def test_start_allows_every_cell(game: UltimateTicTacToe) -> None:
    assert game.legal_actions(game.initial_state()).tolist() == list(range(81))


def test_cell_played_sends_to_that_board(game: UltimateTicTacToe) -> None:
    state = game.apply(game.initial_state(), 9 * 4 + 7)  # centre board, bottom-middle cell
    assert game.legal_actions(state).tolist() == list(range(63, 72))
    state = game.apply(state, 63)  # board 7, top-left cell: back to board 0
    assert game.legal_actions(state).tolist() == list(range(9))


def test_sent_to_won_board_gives_free_choice(game: UltimateTicTacToe) -> None:
    state = position({4: [0, 1, 2], 0: [8]}, {0: [3, 4], 8: [0]}, player=1, forced=1)
    assert state[ku.WON_X] == 1 << 4
    after = game.apply(state, 9 * 1 + 4)  # O plays the centre of board 1: sends X to board 4
    assert after[ku.FORCED] == -1
    open_boards = [b for b in range(9) if b != 4]
    assert game.legal_actions(after).tolist() == open_board_actions(after, open_boards)


def test_winning_a_board_closes_it(game: UltimateTicTacToe) -> None:
    state = position({4: [0, 1]}, {0: [4], 1: [4]}, player=0, forced=4)
    after = game.apply(state, 9 * 4 + 2)  # X completes the top row of board 4
    assert after[ku.WON_X] == 1 << 4 and after[ku.CLOSED] == 1 << 4
    assert after[ku.WON_O] == 0
    assert game.legal_actions(after).tolist() == list(range(18, 27))  # O sent to board 2


def test_sent_to_drawn_board_gives_free_choice(game: UltimateTicTacToe) -> None:
    state = position({2: DRAWN_X, 5: [0]}, {2: DRAWN_O}, player=0, forced=5)
    assert state[ku.CLOSED] == 1 << 2 and state[ku.WON_X] == state[ku.WON_O] == 0
    after = game.apply(state, 9 * 5 + 2)  # X plays cell 2 of board 5: sends O to board 2
    assert after[ku.FORCED] == -1
    assert game.legal_actions(after).tolist() == open_board_actions(after, [0, 1, 3, 4, 5, 6, 7, 8])


def test_filling_a_board_closes_it_and_sending_there_frees(game: UltimateTicTacToe) -> None:
    x_cells = [c for c in DRAWN_X if c != 2]  # board 2 misses only X's top-right cell
    state = position({2: x_cells}, {2: DRAWN_O}, player=0, forced=2)
    assert game.legal_actions(state).tolist() == [9 * 2 + 2]
    after = game.apply(state, 9 * 2 + 2)  # fills board 2 without a line, and sends O there
    assert after[ku.CLOSED] == 1 << 2 and after[ku.WON_X] == 0
    assert after[layout.STATUS] == layout.ONGOING
    assert len(game.legal_actions(after)) == 81 - 9


def test_drawn_board_blocks_a_big_line(game: UltimateTicTacToe) -> None:
    # X owns boards 0 and 1; completing board 2 without a line must not win the game.
    x_cells = [c for c in DRAWN_X if c != 2]
    state = position(
        {0: [0, 1, 2], 1: [0, 1, 2], 2: x_cells, 3: [0, 1]}, {2: DRAWN_O, 5: [4]}, 0, forced=2
    )
    after = game.apply(state, 9 * 2 + 2)
    assert after[layout.STATUS] == layout.ONGOING and after[ku.WON_X] == 0b011
    assert after[ku.CLOSED] == 0b111
    # X then wins board 3 too: boards 0, 1 and 3 are no line, so the game goes on.
    after = game.apply_sequence([9 * 4 + 3, 9 * 3 + 2], after)
    assert after[ku.WON_X] == 0b1011 and after[layout.STATUS] == layout.ONGOING
    assert game.winner(after) is None and game.legal_actions(after).size > 0


def test_drawn_game(game: UltimateTicTacToe) -> None:
    # X won 0, 1, 5, 6; O won 2, 3, 4; board 7 drawn; board 8 misses one cell, no big line left.
    won = [0, 1, 2]
    x_cells = [c for c in DRAWN_X if c != 8]
    state = position(
        {0: won, 1: won, 5: won, 6: won, 7: DRAWN_X, 8: x_cells},
        {2: won, 3: won, 4: won, 7: DRAWN_O, 8: DRAWN_O},
        player=0,
        forced=8,
    )
    assert game.legal_actions(state).tolist() == [9 * 8 + 8]
    assert kernels.random_playout(state) == 0.0
    after = game.apply(state, 9 * 8 + 8)
    assert after[layout.STATUS] == layout.DRAW and after[ku.CLOSED] == ku.FULL
    assert game.is_terminal(after) and game.returns(after) == 0.0 and game.winner(after) is None
    assert not game.legal_mask(after).any()
    assert "draw" in game.render(after)


@pytest.mark.parametrize("player", [0, 1])
def test_win_on_last_open_board(game: UltimateTicTacToe, player: int) -> None:
    # The mover owns boards 0 and 1; all others but board 2 are closed; winning board 2 wins.
    line, two = [0, 1, 2], [0, 1]
    mover = {0: line, 1: line, 2: two, 4: DRAWN_X, 5: DRAWN_X, 6: DRAWN_X, 8: DRAWN_X}
    other = {2: [3, 4], 3: line, 7: line, 4: DRAWN_O, 5: DRAWN_O, 6: DRAWN_O, 8: DRAWN_O}
    x, o = (mover, other) if player == 0 else (other, mover)
    state = position(x, o, player=player, forced=2)
    assert state[ku.CLOSED] == ku.FULL & ~(1 << 2)
    expected = 1.0 if player == 0 else -1.0
    after = game.apply(state, 9 * 2 + 2)
    assert after[layout.STATUS] == (layout.FIRST_WON if player == 0 else layout.SECOND_WON)
    assert after[ku.CLOSED] == ku.FULL  # every board closed, yet a win and not a draw
    assert game.returns(after) == expected and game.winner(after) == player
    assert game.legal_actions(after).size == 0
    # from a position where every move of the mover wins at once, the playout must see the win
    mover[2], other[2] = [0, 1, 5, 7], [3, 4, 6, 8]  # board 2 lacks only the winning cell
    only_winning = position(x, o, player=player, forced=2)
    assert game.legal_actions(only_winning).tolist() == [9 * 2 + 2]
    assert kernels.random_playout(only_winning) == expected


def test_random_games_match_the_reference(game: UltimateTicTacToe) -> None:
    rng = np.random.default_rng(7)
    results = set()
    for _ in range(40):
        state, ref = game.initial_state(), Reference()
        while True:
            assert game.legal_actions(state).tolist() == ref.legal()
            assert state[layout.STATUS] == ref.status
            if ref.status != layout.ONGOING:
                break
            action = int(rng.choice(ref.legal()))
            state = game.apply(state, action)
            ref.play(action)
        results.add(ref.status)
    assert results == {layout.FIRST_WON, layout.SECOND_WON, layout.DRAW}


# --- errors ------------------------------------------------------------------------------------


def test_illegal_action_names_it(game: UltimateTicTacToe) -> None:
    state = game.apply(game.initial_state(), 40)  # O must play in board 4
    with pytest.raises(IllegalActionError, match=r"illegal action 0 .*legal actions: \[36, 37"):
        game.apply(state, 0)
    with pytest.raises(IllegalActionError, match="illegal action 40"):
        game.apply(state, 40)  # already taken
    for bad in (81, -1):
        with pytest.raises(IllegalActionError, match=f"illegal action {bad} .*outside 0..80"):
            game.apply(state, bad)
    with pytest.raises(IllegalActionError, match="an action is an int"):
        game.apply(state, 1.5)  # type: ignore[arg-type]


def test_stepping_a_finished_game_raises(game: UltimateTicTacToe) -> None:
    rng = np.random.default_rng(1)
    state = game.initial_state()
    while not game.is_terminal(state):
        state = game.apply(state, int(rng.choice(game.legal_actions(state))))
    with pytest.raises(GameOverError, match="the game is over"):
        game.apply(state, 0)


@pytest.mark.parametrize(
    "bad",
    [
        ku.initial_state().astype(np.int64),
        ku.initial_state()[:31],
        ku.initial_state().reshape(4, 8),
        list(ku.initial_state()),
        make("tictactoe").initial_state(),
    ],
    ids=["int64", "short", "2d", "list", "other-game"],
)
def test_bad_state_raises(game: UltimateTicTacToe, bad: object) -> None:
    with pytest.raises(InvalidStateError):
        game.apply(bad, 0)  # type: ignore[arg-type]
    with pytest.raises(InvalidStateError):
        game.legal_actions(bad)  # type: ignore[arg-type]


def test_unknown_option_raises() -> None:
    with pytest.raises(UnknownGameError, match="bad option for game 'uttt'"):
        make("uttt", size=3)


# --- encoding, text ----------------------------------------------------------------------------


def test_encode_after_one_move(game: UltimateTicTacToe) -> None:
    planes = game.encode(game.apply(game.initial_state(), 9 * 4 + 0))  # X on d4, O to move
    assert planes.shape == (ku.NUM_PLANES, 9, 9) and planes.dtype == np.float32
    assert not planes[0].any()  # O's own marks
    assert np.argwhere(planes[1]).tolist() == [[3, 3]]  # X's mark: board 4 top-left = row 3 col 3
    legal = np.zeros((9, 9), dtype=np.float32)
    legal[0:3, 0:3] = 1  # sent to board 0
    assert np.array_equal(planes[2], legal)
    assert not planes[3:6].any()
    assert (planes[6] == 1).all() and not planes[7].any()  # O (second player) moves


def test_encode_small_board_planes(game: UltimateTicTacToe) -> None:
    # X won board 0, O won board 8, board 2 drawn; X to move, free choice.
    state = position({0: [0, 1, 2], 2: DRAWN_X}, {8: [2, 4, 6], 2: DRAWN_O}, player=0)
    planes = game.encode(state)
    block = np.zeros((3, 9, 9), dtype=np.float32)  # own won, opponent won, drawn
    block[0, 0:3, 0:3] = 1
    block[1, 6:9, 6:9] = 1
    block[2, 0:3, 6:9] = 1
    assert np.array_equal(planes[3:6], block)
    assert planes[0, 0].tolist()[:3] == [1, 1, 1] and planes[1, 6:9, 6:9].sum() == 3
    assert planes[2].sum() == 81 - 27 and (planes[7] == 1).all()
    o_view = game.encode(position({0: [0, 1, 2], 2: DRAWN_X}, {8: [2, 4, 6], 2: DRAWN_O}, 1))
    assert np.array_equal(o_view[3], block[1]) and np.array_equal(o_view[4], block[0])
    assert np.array_equal(o_view[0], planes[1]) and np.array_equal(o_view[1], planes[0])


def grid_cells(pairs: list[tuple[int, int]]) -> np.ndarray:
    """A 9x9 plane with ones on the (board, cell) pairs."""
    plane = np.zeros((9, 9), dtype=np.float32)
    for board, cell in pairs:
        plane[3 * (board // 3) + cell // 3, 3 * (board % 3) + cell % 3] = 1
    return plane


def test_threat_planes_on_a_hand_made_position() -> None:
    # X won boards 0 and 1 (board 2 would win the game), O won 6 and 7 (board 8 would); X can
    # take board 2 at its cell 8, O board 3 at its cell 2.
    x = {0: [0, 1, 2], 1: [3, 4, 5], 2: [0, 4], 4: [0]}
    o = {2: [1], 3: [0, 1], 6: [0, 4, 8], 7: [2, 4, 6], 8: [3]}
    game = make("uttt", threat_planes=True)
    assert game.observation_shape == (ku.NUM_PLANES + ku.THREAT_PLANES, 9, 9)
    state = position(x, o, player=0)
    planes = game.encode(state)
    assert np.array_equal(planes[: ku.NUM_PLANES], make("uttt").encode(state))
    reused = np.ones_like(planes)  # the search encodes leaves into reused buffers
    kernels.encode(state, reused)
    assert np.array_equal(reused, planes)
    open_boards = (2, 3, 4, 5, 8)
    empty = [(b, c) for b in open_boards for c in range(9) if c not in x.get(b, []) + o.get(b, [])]
    expected = {
        8: grid_cells([(2, 8)]),
        9: grid_cells([(3, 2)]),
        10: grid_cells([(b, c) for b, c in empty if c in (0, 1, 6, 7)]),  # to a closed board
        11: grid_cells([(b, c) for b, c in empty if c == 3]),  # to board 3, where O can win
        12: grid_cells([(b, c) for b, c in empty if c == 2]),  # to board 2, where X can win
        13: grid_cells([(2, c) for c in range(9)]),
        14: grid_cells([(8, c) for c in range(9)]),
    }
    for plane, want in expected.items():
        assert np.array_equal(planes[plane], want), f"plane {plane}"
    o_view = game.encode(position(x, o, player=1))  # the mover's view: the pairs swap
    for mine, theirs in ((8, 9), (11, 12), (13, 14)):
        assert np.array_equal(o_view[mine], planes[theirs])
        assert np.array_equal(o_view[theirs], planes[mine])
    assert np.array_equal(o_view[10], planes[10])


def test_threat_planes_are_an_option_of_the_encoding_not_the_rules() -> None:
    plain, threats = make("uttt"), make("uttt", threat_planes=True)
    assert plain.options == {} and threats.options == {"threat_planes": True}
    assert plain.rating_key == threats.rating_key == "uttt"  # one game to play and rate
    assert repr(threats) == repr(plain) == "UltimateTicTacToe()"  # match records name the game
    assert make("uttt", **threats.options).observation_shape == threats.observation_shape
    with pytest.raises(UnknownGameError, match="threat_planes must be true or false"):
        make("uttt", threat_planes="yes")


def test_strategy_planes_on_a_hand_made_position() -> None:
    # X won boards 0 and 1 (board 2 would win the game: X takes it at its cell 8), O won 6 and
    # 7 (board 8 would: O takes it at its cell 5). O's marks block every line of board 4 for X,
    # X's every line of board 5 for O.
    x = {0: [0, 1, 2], 1: [3, 4, 5], 2: [0, 4], 4: [1], 5: [0, 4, 5, 7]}
    o = {2: [1], 4: [0, 4, 5, 7], 5: [1], 6: [0, 4, 8], 7: [2, 4, 6], 8: [3, 4]}
    game = make("uttt", threat_planes=True, strategy_planes=True)
    planes_before = ku.NUM_PLANES + ku.THREAT_PLANES
    assert game.observation_shape == (planes_before + ku.STRATEGY_PLANES, 9, 9)
    state = position(x, o, player=0)
    planes = game.encode(state)
    threats = make("uttt", threat_planes=True).encode(state)
    assert np.array_equal(planes[:planes_before], threats)
    reused = np.ones_like(planes)  # the search encodes leaves into reused buffers
    kernels.encode(state, reused)
    assert np.array_equal(reused, planes)

    def blocks(values: dict[int, float]) -> np.ndarray:
        plane = np.zeros((9, 9), dtype=np.float32)
        for board, value in values.items():
            plane[
                3 * (board // 3) : 3 * (board // 3) + 3, 3 * (board % 3) : 3 * (board % 3) + 3
            ] = value
        return plane

    open_boards = (2, 3, 4, 5, 8)
    empty = [(b, c) for b in open_boards for c in range(9) if c not in x.get(b, []) + o.get(b, [])]
    # X can complete the big lines 0-1-2 and 2-5-8 (board 4 is dead for X, 6 and 7 are O's);
    # O can complete 6-7-8 and 2-4-6 (board 5 is dead for O, 0 and 1 are X's).
    expected = {
        15: blocks({4: 1.0}),
        16: blocks({5: 1.0}),
        17: blocks({0: 0.25, 1: 0.25, 2: 0.5, 5: 0.25, 8: 0.25}),
        18: blocks({2: 0.25, 4: 0.25, 6: 0.5, 7: 0.25, 8: 0.25}),
        # sending O to board 8 or to a closed board (a free choice) lets O take board 8 and the
        # game, unless the move wins the game first (board 2, cell 8)
        19: grid_cells([(b, c) for b, c in empty if c in (0, 1, 6, 7, 8) and (b, c) != (2, 8)]),
    }
    for plane, want in expected.items():
        assert np.array_equal(planes[plane], want), f"plane {plane}"
    o_view = game.encode(position(x, o, player=1))  # the mover's view: the pairs swap
    for mine, theirs in ((15, 16), (17, 18)):
        assert np.array_equal(o_view[mine], planes[theirs])
        assert np.array_equal(o_view[theirs], planes[mine])


def test_the_losing_moves_plane_is_the_moves_after_which_the_opponent_can_win_at_once() -> None:
    game = make("uttt", threat_planes=True, strategy_planes=True)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(30):
        state = game.initial_state()
        while not game.is_terminal(state):
            plane = game.encode(state)[19]
            for action in game.legal_actions(state):
                after = game.apply(state, int(action))
                mover = int(state[layout.PLAYER])
                loses = not game.is_terminal(after) and any(
                    game.winner(game.apply(after, int(reply))) == 1 - mover
                    for reply in game.legal_actions(after)
                )
                row, col = divmod(int(game.action_cells[action]), 9)
                assert plane[row, col] == loses, (state.tolist(), int(action))
                checked += loses
            state = game.apply(state, int(rng.choice(game.legal_actions(state))))
    assert checked > 50  # the random games reached many losing moves


def test_strategy_planes_need_the_threat_planes() -> None:
    game = make("uttt", threat_planes=True, strategy_planes=True)
    assert game.options == {"threat_planes": True, "strategy_planes": True}
    assert game.rating_key == "uttt" and repr(game) == "UltimateTicTacToe()"
    assert make("uttt", **game.options).observation_shape == game.observation_shape
    with pytest.raises(UnknownGameError, match="threat_planes=true too"):
        make("uttt", strategy_planes=True)
    with pytest.raises(UnknownGameError, match="strategy_planes must be true or false"):
        make("uttt", threat_planes=True, strategy_planes=1)


def test_action_strings_round_trip(game: UltimateTicTacToe) -> None:
    assert [game.action_to_string(a) for a in (0, 8, 40, 80)] == ["a1", "c3", "e5", "i9"]
    assert game.action_to_string(9 * 1 + 3) == "d2"  # board 1 (top middle), cell 3
    assert all(game.string_to_action(game.action_to_string(a)) == a for a in range(81))
    with pytest.raises(ValueError, match=r"a1\.\.i9"):
        game.string_to_action("j1")


def test_render_shows_marks_boards_and_turn(game: UltimateTicTacToe) -> None:
    state = position({0: [0, 1, 2], 2: DRAWN_X}, {8: [2, 4, 6], 2: DRAWN_O}, player=0)
    text = game.render(game.apply(state, 9 * 4 + 4))
    lines = text.splitlines()
    assert lines[1].split()[1:4] == ["X", "X", "X"]  # row 1: board 0's top row
    assert "O to move, in board 4 only" in text and "last move: e5" in text
    assert "X . #" in text and ". * ." in text and ". . O" in text  # the big-board map
    assert "X to move, in any board" in game.render(game.initial_state())


# --- random playouts ---------------------------------------------------------------------------


@pytest.mark.parametrize("playout", [kernels.random_playout, kernels.guided_playout])
def test_playouts_leave_input_and_are_seeded(playout) -> None:
    state = ku.initial_state()
    before = state.copy()
    kernels.seed(123)
    first = [playout(state) for _ in range(50)]
    kernels.seed(123)
    assert [playout(state) for _ in range(50)] == first
    assert np.array_equal(state, before)
    assert set(first) <= {-1.0, 0.0, 1.0} and len(set(first)) > 1


def test_random_playout_matches_random_games(game: UltimateTicTacToe) -> None:
    """The playout's win/draw/loss frequencies equal those of random games through ``apply``
    (two-sample chi-square, 2 degrees of freedom, rejected only at p < 0.001)."""
    kernels.seed(2024)
    state = game.initial_state()
    fast = np.array([kernels.random_playout(state) for _ in range(20000)])
    rng = np.random.default_rng(2024)
    slow = []
    for _ in range(800):
        s = state
        while not game.is_terminal(s):
            s = game.apply(s, int(rng.choice(game.legal_actions(s))))
        slow.append(game.returns(s))
    counts = np.array([[np.sum(np.array(r) == v) for v in (-1, 0, 1)] for r in (fast, slow)])
    expected = counts.sum(1, keepdims=True) * counts.sum(0, keepdims=True) / counts.sum()
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 13.8, counts
    assert counts[:, 1].min() > 0  # draws do happen in random play


# --- the guided playout (the search's search.rollout_policy=guided) ------------------------------


def _guided_moves(state: np.ndarray, draws: int = 200) -> set[int]:
    """The guided policy's moves in ``state`` over ``draws`` random words."""
    cells = np.zeros((3, 9), np.int64)
    moves, rng = set(), np.random.default_rng(0)
    for _ in range(draws):
        x = np.uint64(rng.integers(1, 2**64, dtype=np.uint64))
        player, forced, closed = (int(state[i]) for i in (layout.PLAYER, ku.FORCED, ku.CLOSED))
        moves.add(ku._guided_move(state, player, forced, closed, x, cells))
    return moves


@pytest.mark.parametrize("player", [0, 1])
def test_guided_playout_takes_a_game_winning_move(game: UltimateTicTacToe, player: int) -> None:
    # the mover owns boards 0 and 1; board 2, the last open one, has five free cells, one winning
    line = [0, 1, 2]
    mover = {0: line, 1: line, 2: [0, 1], 4: DRAWN_X, 5: DRAWN_X, 6: DRAWN_X, 8: DRAWN_X}
    other = {2: [3, 4], 3: line, 7: line, 4: DRAWN_O, 5: DRAWN_O, 6: DRAWN_O, 8: DRAWN_O}
    x, o = (mover, other) if player == 0 else (other, mover)
    state = position(x, o, player=player, forced=2)
    assert len(game.legal_actions(state)) == 5
    assert _guided_moves(state) == {9 * 2 + 2}
    kernels.seed(5)
    expected = 1.0 if player == 0 else -1.0
    assert {kernels.guided_playout(state) for _ in range(100)} == {expected}
    assert len({kernels.random_playout(state) for _ in range(100)}) > 1  # random ones miss it


def test_guided_move_wins_a_small_board_else_keeps_the_opponent_sent(game) -> None:
    # X to move in board 4 holding 0 and 1 there: cell 2 wins the board
    state = position({4: [0, 1], 0: [4]}, {4: [4, 8], 2: [0]}, player=0, forced=4)
    assert _guided_moves(state) == {9 * 4 + 2}
    # no board to win; board 3 is closed, so cell 3 of board 0 would give O a free choice
    state = position({0: [0, 2, 7], 3: DRAWN_X}, {0: [1, 4, 6, 8], 3: DRAWN_O}, 0, forced=0)
    assert game.legal_actions(state).tolist() == [3, 5]
    assert _guided_moves(state) == {5}
    # every free cell gives a free choice: any of them
    state = position(
        {0: [0, 2, 7], 3: DRAWN_X, 5: DRAWN_X},
        {0: [1, 4, 6, 8], 3: DRAWN_O, 5: DRAWN_O},
        0,
        forced=0,
    )
    assert _guided_moves(state) == {3, 5}
