"""Ultimate Tic-Tac-Toe rules as numba kernels over the flat int32 state (see ``layout.py``).

Body layout (indices into the state array; every mask is 9 bits, bit ``i`` = cell or board ``i``
in row-major order from the top left):

- ``X_CELLS + b`` (b = 0..8): cells of small board ``b`` marked by the first player (X);
- ``O_CELLS + b``: the same for the second player (O);
- ``WON_X`` / ``WON_O``: small boards won by X / by O;
- ``CLOSED``: small boards that are won or full (no move may be played there any more);
- ``FORCED``: the small board the player to move must play in, -1 for any open board.

Action ``9 * board + cell``. Playing ``cell`` sends the opponent to the small board of that index,
unless that board is closed: then they may play in any open board. Three won small boards in a
line win the game; when every small board is closed without such a line the game is drawn.
Line detection reads 512-entry tables over 9-bit masks, shared by both board sizes (``uttt_masks``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ultimate_rl.games import layout
from ultimate_rl.games.kernels.uttt_masks import (
    HAS_LINE,
    LINES,
    NTH_BIT,
    OPEN_LINE,
    POPCOUNT,
    THREATS,
)
from ultimate_rl.games.registry import game_id

GAME_ID = game_id("uttt")
X_CELLS = layout.BODY
O_CELLS = layout.BODY + 9
WON_X = layout.BODY + 18
WON_O = layout.BODY + 19
CLOSED = layout.BODY + 20
FORCED = layout.BODY + 21

FULL = 0x1FF  # all nine bits
NUM_ACTIONS = 81
NUM_PLANES = 8
THREAT_PLANES = 7  # the planes ``encode`` adds when given room for them (``threat_planes``)
STRATEGY_PLANES = 5  # and after those, given room (``strategy_planes``)


def initial_state() -> np.ndarray:
    """The start position: empty boards, X to move anywhere."""
    state = layout.start_state(GAME_ID)
    state[FORCED] = -1
    return state


@njit(cache=True)
def num_actions(state: np.ndarray) -> int:
    return NUM_ACTIONS


@njit(cache=True)
def _playable(state: np.ndarray) -> int:
    """Mask of the small boards the player to move may play in."""
    forced = state[FORCED]
    if forced >= 0:
        return 1 << forced
    return FULL & ~state[CLOSED]


@njit(cache=True, inline="always")
def _empty(state: np.ndarray, board: int) -> int:
    return FULL & ~(state[X_CELLS + board] | state[O_CELLS + board])


@njit(cache=True)
def legal_mask(state: np.ndarray, mask: np.ndarray) -> int:
    mask[:NUM_ACTIONS] = 0
    if state[layout.STATUS] != layout.ONGOING:
        return 0
    playable = _playable(state)
    count = 0
    for board in range(9):
        if playable >> board & 1:
            empty = _empty(state, board)
            for cell in range(9):
                if empty >> cell & 1:
                    mask[9 * board + cell] = 1
            count += POPCOUNT[empty]
    return count


@njit(cache=True, inline="always")
def _mark(
    state: np.ndarray, player: int, board: int, cell: int, won: int, closed: int
) -> tuple[int, int]:
    """Puts ``player``'s mark on ``cell`` of ``board``; returns the updated (won, closed) masks,
    ``won`` being that player's won boards. The one place where small boards get decided."""
    own = X_CELLS + 9 * player + board
    marks = state[own] | (1 << cell)
    state[own] = marks
    if HAS_LINE[marks]:
        return won | (1 << board), closed | (1 << board)
    if marks | state[X_CELLS + 9 * (1 - player) + board] == FULL:
        return won, closed | (1 << board)
    return won, closed


@njit(cache=True, inline="always")
def _status(player: int, won: int, closed: int) -> int:
    """Game status after ``player`` moved, given that player's won boards and the closed ones."""
    if HAS_LINE[won]:
        return layout.FIRST_WON + player
    if closed == FULL:
        return layout.DRAW
    return layout.ONGOING


@njit(cache=True, inline="always")
def _forced(closed: int, cell: int) -> int:
    """The board the next player is sent to: ``cell``'s board, or -1 (any) when it is closed."""
    return -1 if closed >> cell & 1 else cell


@njit(cache=True)
def apply(state: np.ndarray, action: int) -> None:
    board = action // 9
    cell = action % 9
    player = state[layout.PLAYER]
    won, closed = _mark(state, player, board, cell, state[WON_X + player], state[CLOSED])
    state[WON_X + player] = won
    state[CLOSED] = closed
    state[layout.STATUS] = _status(player, won, closed)
    state[FORCED] = _forced(closed, cell)
    state[layout.PLAYER] = 1 - player
    state[layout.MOVES] += 1
    state[layout.LAST] = action


@njit(cache=True)
def _fill_blocks(plane: np.ndarray, boards: int) -> None:
    """Sets to 1 the 3x3 block of every small board in the ``boards`` mask, 0 elsewhere."""
    for board in range(9):
        value = np.float32(boards >> board & 1)
        top = 3 * (board // 3)
        left = 3 * (board % 3)
        plane[top : top + 3, left : left + 3] = value


@njit(cache=True)
def encode(state: np.ndarray, planes: np.ndarray) -> None:
    """Planes, mover's view: 0 own marks, 1 opponent marks, 2 legal cells, 3 own won boards,
    4 opponent won boards, 5 drawn boards, 6 ones (marks the padding edge), 7 mover is first;
    given ``NUM_PLANES + THREAT_PLANES`` planes, the threat planes after them
    (``_encode_threats``)."""
    player = state[layout.PLAYER]
    own_cells = X_CELLS if player == 0 else O_CELLS
    opp_cells = O_CELLS if player == 0 else X_CELLS
    ongoing = state[layout.STATUS] == layout.ONGOING
    playable = _playable(state) if ongoing else 0
    for board in range(9):
        own = state[own_cells + board]
        opp = state[opp_cells + board]
        free = FULL & ~(own | opp) if playable >> board & 1 else 0
        top = 3 * (board // 3)
        left = 3 * (board % 3)
        for cell in range(9):
            row = top + cell // 3
            col = left + cell % 3
            planes[0, row, col] = own >> cell & 1
            planes[1, row, col] = opp >> cell & 1
            planes[2, row, col] = free >> cell & 1
    own_won = state[WON_X if player == 0 else WON_O]
    opp_won = state[WON_O if player == 0 else WON_X]
    _fill_blocks(planes[3], own_won)
    _fill_blocks(planes[4], opp_won)
    _fill_blocks(planes[5], state[CLOSED] & ~(own_won | opp_won))
    planes[6] = 1.0
    planes[7] = 1.0 if player == 0 else 0.0
    if planes.shape[0] >= NUM_PLANES + THREAT_PLANES:
        opp_win_cells = _encode_threats(state, planes, own_cells, opp_cells, own_won, opp_won)
        if planes.shape[0] >= NUM_PLANES + THREAT_PLANES + STRATEGY_PLANES:
            _encode_strategy(state, planes, own_cells, opp_cells, own_won, opp_won, opp_win_cells)


@njit(cache=True)
def _encode_threats(
    state: np.ndarray,
    planes: np.ndarray,
    own_cells: int,
    opp_cells: int,
    own_won: int,
    opp_won: int,
) -> np.ndarray:
    """The threat planes, mover's view, on the empty cells of open boards: 8 / 9 the cells that
    win their small board for the mover / the opponent; 10 those that send the opponent to a
    closed board (a free choice), 11 to an open board where the opponent can win at once, 12 to
    one where the mover could; 13 / 14 the open boards whose capture wins the game for the mover
    / the opponent (where a move sends the opponent is far from the cell on the grid). Returns
    per board the opponent's cells that win the game (the strategy planes read them)."""
    planes[NUM_PLANES : NUM_PLANES + THREAT_PLANES] = 0.0  # a reused buffer: every cell written
    closed = state[CLOSED]
    empties = np.zeros(9, dtype=np.int64)  # 0 for a closed board: its cells get no threat
    own_threats = np.zeros(9, dtype=np.int64)
    opp_threats = np.zeros(9, dtype=np.int64)
    own_wins = opp_wins = 0
    for board in range(9):
        if not closed >> board & 1:
            empties[board] = _empty(state, board)
            own_threats[board] = THREATS[state[own_cells + board]] & empties[board]
            opp_threats[board] = THREATS[state[opp_cells + board]] & empties[board]
            own_wins |= np.int64(HAS_LINE[own_won | 1 << board]) << board
            opp_wins |= np.int64(HAS_LINE[opp_won | 1 << board]) << board
    for board in range(9):
        top = 3 * (board // 3)
        left = 3 * (board % 3)
        for cell in range(9):
            if not empties[board] >> cell & 1:
                continue
            row = top + cell // 3
            col = left + cell % 3
            planes[8, row, col] = own_threats[board] >> cell & 1
            planes[9, row, col] = opp_threats[board] >> cell & 1
            if closed >> cell & 1:
                planes[10, row, col] = 1.0
            else:
                planes[11, row, col] = 1.0 if opp_threats[cell] else 0.0
                planes[12, row, col] = 1.0 if own_threats[cell] else 0.0
    _fill_blocks(planes[13], own_wins)
    _fill_blocks(planes[14], opp_wins)
    for board in range(9):
        opp_threats[board] &= -(opp_wins >> board & 1)  # kept where capturing wins the game
    return opp_threats


@njit(cache=True)
def _encode_strategy(
    state: np.ndarray,
    planes: np.ndarray,
    own_cells: int,
    opp_cells: int,
    own_won: int,
    opp_won: int,
    opp_win_cells: np.ndarray,
) -> None:
    """The strategy planes, mover's view: 15 / 16 the open boards the mover / the opponent can no
    longer win; 17 / 18 per board, the big-board lines through it the mover / the opponent can
    still complete, over 4; 19 the cells whose move lets the opponent win the game at once
    (whole-board facts: a losing move's reply lies on the board it sends to). ``opp_win_cells``:
    per board the opponent's cells that win the game, from ``_encode_threats``."""
    base = NUM_PLANES + THREAT_PLANES
    planes[base : base + STRATEGY_PLANES] = 0.0  # a reused buffer: every cell written
    closed = state[CLOSED]
    own_able = _winnable(state, opp_cells, own_won)
    opp_able = _winnable(state, own_cells, opp_won)
    _fill_blocks(planes[15], FULL & ~closed & ~own_able)
    _fill_blocks(planes[16], FULL & ~closed & ~opp_able)
    for board in range(9):
        own_lines = opp_lines = 0
        for line in LINES:
            if line >> board & 1:
                own_lines += 1 if line & own_able == line else 0
                opp_lines += 1 if line & opp_able == line else 0
        top, left = 3 * (board // 3), 3 * (board % 3)
        planes[17, top : top + 3, left : left + 3] = own_lines / 4.0
        planes[18, top : top + 3, left : left + 3] = opp_lines / 4.0
    if state[layout.STATUS] != layout.ONGOING:
        return
    playable = _playable(state)
    for board in range(9):
        if not playable >> board & 1:
            continue
        top, left = 3 * (board // 3), 3 * (board % 3)
        own = state[own_cells + board]
        empty = FULL & ~(own | state[opp_cells + board])
        for cell in range(9):
            if not empty >> cell & 1:
                continue
            marks = own | 1 << cell
            after = closed
            if HAS_LINE[marks]:
                if HAS_LINE[own_won | 1 << board]:
                    continue  # the move wins the game
                after |= 1 << board
            elif marks | state[opp_cells + board] == FULL:
                after |= 1 << board
            reach = FULL & ~after if after >> cell & 1 else (1 << cell) & ~after
            loses = False
            for target in range(9):
                if reach >> target & 1:
                    blocked = 1 << cell if target == board else 0  # the move takes that cell
                    loses |= opp_win_cells[target] & ~blocked != 0
            planes[19, top + cell // 3, left + cell % 3] = 1.0 if loses else 0.0


@njit(cache=True, inline="always")
def _winnable(state: np.ndarray, opp_cells: int, won: int) -> int:
    """The small boards a player has won or may still win: the won ones, and the open ones with
    a line free of the opponent's marks (``opp_cells``: where the opponent's marks start)."""
    closed = state[CLOSED]
    able = won
    for board in range(9):
        if not closed >> board & 1 and OPEN_LINE[state[opp_cells + board]]:
            able |= 1 << board
    return able


@njit(cache=True)
def dead_draw(state: np.ndarray) -> bool:
    """Whether neither player can still complete a big-board line of boards won or winnable, so
    the game can only end drawn (the search's ``contempt`` stops there); usually some moves
    before the last board closes."""
    x_able = _winnable(state, O_CELLS, state[WON_X])
    o_able = _winnable(state, X_CELLS, state[WON_O])
    open_lines = 0
    for line in LINES:
        open_lines += line & x_able == line or line & o_able == line
    return open_lines == 0


@njit(cache=True, inline="always")
def _xorshift(x: np.uint64) -> np.uint64:
    """One step of Marsaglia's xorshift64: a few cycles, against ~15 ns for np.random."""
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    return x


@njit(cache=True, inline="always")
def _below(x: np.uint64, n: int) -> int:
    """Maps a random 64-bit word to 0..n-1 (multiply-shift on its high half, no division)."""
    return np.int64(((x >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _random_move(state: np.ndarray, forced: int, closed: int, x: np.uint64) -> int:
    """A uniformly random legal action drawn with the random word ``x``, from the bitboards."""
    if forced >= 0:
        empty = _empty(state, forced)
        return 9 * forced + NTH_BIT[empty, _below(x, POPCOUNT[empty])]
    total = 0
    for board in range(9):
        if not closed >> board & 1:
            total += POPCOUNT[_empty(state, board)]
    pick = _below(x, total)
    for board in range(9):
        if not closed >> board & 1:
            empty = _empty(state, board)
            count = POPCOUNT[empty]
            if pick < count:
                return 9 * board + NTH_BIT[empty, pick]
            pick -= count
    return -1


@njit(cache=True, inline="always")
def _pick(masks: np.ndarray, playable: int, count: int, x: np.uint64) -> int:
    """A uniformly random action among the cells of ``masks[board]`` over the ``playable``
    boards, which hold ``count`` cells in all."""
    pick = _below(x, count)
    for board in range(9):
        if playable >> board & 1:
            n = POPCOUNT[masks[board]]
            if pick < n:
                return 9 * board + NTH_BIT[masks[board], pick]
            pick -= n
    return -1


@njit(cache=True, inline="always")
def _guided_move(
    state: np.ndarray, player: int, forced: int, closed: int, x: np.uint64, cells: np.ndarray
) -> int:
    """The guided playout's move: a move that wins the game, else a random one that wins a small
    board, else a random one that does not send the opponent to a closed board (a free choice
    of board), else any random move. ``cells`` is scratch: three 9-board rows of cell masks."""
    playable = 1 << forced if forced >= 0 else FULL & ~closed
    won = state[WON_X + player]
    wins, keeps, empties = cells[0], cells[1], cells[2]  # keeps: the opponent stays sent
    n_wins = n_keeps = n_empty = 0
    for board in range(9):
        if playable >> board & 1:
            empty = _empty(state, board)
            win = THREATS[state[X_CELLS + 9 * player + board]] & empty
            if win and HAS_LINE[won | 1 << board]:
                return 9 * board + NTH_BIT[win, 0]
            closes = closed | (1 << board if POPCOUNT[empty] == 1 else 0)  # its last cell
            wins[board], keeps[board], empties[board] = win, empty & ~closes, empty
            n_wins += POPCOUNT[win]
            n_keeps += POPCOUNT[keeps[board]]
            n_empty += POPCOUNT[empty]
    if n_wins:
        return _pick(wins, playable, n_wins, x)
    if n_keeps:
        return _pick(keeps, playable, n_keeps, x)
    return _pick(empties, playable, n_empty, x)


@njit(cache=True, inline="always")
def _playout(state: np.ndarray, guided: bool) -> float:
    """Plays a game out on a COPY of ``state``, by random moves or the guided policy; +1/0/-1
    from the first player's view.

    The hot loop of the UCT baseline and the search's playouts: header fields live in local
    variables (only the marks and won masks go through the copy), and one draw from numba's
    seeded generator starts a private xorshift stream, so ``kernels.seed`` still makes playouts
    reproducible.
    """
    s = state.copy()
    # int64 locals: mixing them with the int32 array entries would otherwise unify types per step
    status = np.int64(s[layout.STATUS])
    player = np.int64(s[layout.PLAYER])
    closed = np.int64(s[CLOSED])
    forced = np.int64(s[FORCED])
    cells = np.zeros((3, 9 if guided else 0), np.int64)
    x = np.uint64(np.random.randint(1, 2**62))
    for _ in range(NUM_ACTIONS):  # no game lasts longer: a corrupt state cannot loop forever
        if status != layout.ONGOING:
            break
        x = _xorshift(x)
        if guided:
            action = _guided_move(s, player, forced, closed, x, cells)
        else:
            action = _random_move(s, forced, closed, x)
        cell = action % 9
        won, closed = _mark(s, player, action // 9, cell, s[WON_X + player], closed)
        s[WON_X + player] = won
        status = _status(player, won, closed)
        forced = _forced(closed, cell)
        player = 1 - player
    if status == layout.ONGOING:
        raise ValueError("uttt playout: inconsistent state (no legal move left)")
    if status == layout.FIRST_WON:
        return 1.0
    if status == layout.SECOND_WON:
        return -1.0
    return 0.0


@njit(cache=True)
def random_playout(state: np.ndarray) -> float:
    """Uniformly random moves to the end (``_playout``)."""
    return _playout(state, False)


@njit(cache=True)
def guided_playout(state: np.ndarray) -> float:
    """The search's stronger playout (``search.rollout_policy=guided``): wins taken, free
    choices of board not given away (``_guided_move``)."""
    return _playout(state, True)
