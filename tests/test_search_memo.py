"""``MemoEvaluator``: a fixed network's outputs remembered, and the every-line walks send each
distinct position to the network once."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from ultimate_rl.agents.every_line import budget_player, worst_game_line, worst_line
from ultimate_rl.games import make
from ultimate_rl.search.memo import MemoEvaluator
from ultimate_rl.train.walk_book import search_lessons


class Counted:
    """A fixed, arbitrary network (outputs drawn from a hash of each position's planes) that
    counts how often each position reaches it."""

    def __init__(self) -> None:
        self.seen: dict[bytes, int] = {}

    def __call__(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, values = [], []
        for p in planes:
            self.seen[p.tobytes()] = self.seen.get(p.tobytes(), 0) + 1
            rng = np.random.default_rng(zlib.crc32(p.tobytes()))
            logits.append(rng.normal(size=masks.shape[1]))
            values.append(rng.uniform(-1, 1))
        logits = np.where(masks, np.array(logits, np.float32), -1e9).astype(np.float32)
        return logits, np.array(values, np.float32)


def positions(game, sequences: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    states = [game.apply_sequence(s) for s in sequences]
    planes = np.stack([game.encode(s) for s in states]).astype(np.float32)
    masks = np.stack([game.legal_mask(s) for s in states])
    return planes, masks


@pytest.mark.parametrize("max_positions", [1_000, 3])
def test_it_answers_as_the_network_and_asks_it_once_a_position(max_positions: int):
    game = make("tictactoe")
    network = Counted()
    memo = MemoEvaluator(network, max_positions=max_positions)
    batches = [[[4], [0], [4], [4, 0]], [[4, 0], [8], [0]], [[2, 6], [4]]]
    for sequences in batches:
        planes, masks = positions(game, sequences)
        got, want = memo(planes, masks), Counted()(planes, masks)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    distinct = {tuple(s) for b in batches for s in b}
    assert memo.asked == 9
    if max_positions > len(distinct):  # room for all: each distinct position once
        assert memo.evaluated == len(distinct) == len(network.seen)
        assert set(network.seen.values()) == {1}
    else:  # the memory starts again when full, and still answers right
        assert memo.evaluated > len(distinct)


def test_a_walk_and_its_lessons_send_each_position_to_the_network_once():
    game = make("tictactoe")
    for side in (0, 1):
        network = Counted()
        worst_line(game, budget_player(game, network, 8), side)
        assert network.seen and set(network.seen.values()) == {1}
        network = Counted()
        worst_game_line(game, network, side, 8)
        assert network.seen and set(network.seen.values()) == {1}
    network = Counted()
    states = np.stack([game.apply_sequence(s) for s in ([], [4], [4, 0], [0], [0, 4])])
    search_lessons(game, network, states, 8)
    assert network.seen and set(network.seen.values()) == {1}


def test_max_positions_is_checked():
    with pytest.raises(ValueError, match="max_positions"):
        MemoEvaluator(Counted(), max_positions=0)
