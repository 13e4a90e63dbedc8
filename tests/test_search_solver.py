"""MCTS-Solver in the batched search (``search/solver.py``): every proof is the exact value, proofs
are found and kept across moves, the move played follows them, and without the solver nothing
but finished games is proven."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ultimate_rl.games import layout, make, sample_positions, solve
from ultimate_rl.search import ALGORITHMS, BatchedSearch, SearchConfig, solver, tree

GAMES = ("tictactoe", "numerical_ttt")


def uniform(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A network that knows nothing: uniform priors, value 0."""
    return np.zeros(masks.shape, np.float32), np.zeros(len(planes), np.float32)


def first_player_value(game, state: np.ndarray) -> int:
    """The exact result of ``state`` for the first player."""
    return int(tree.for_player(solve(game, state)[0], int(state[layout.PLAYER])))


def check_proofs(game, forest: tree.Forest, trees: int, cache: dict[bytes, int]) -> int:
    """Asserts every proven node of the first ``trees`` trees holds its exact value; returns how
    many proven nodes were not finished games."""
    proofs = 0
    for b in range(trees):
        for node in range(int(forest.node_count[b])):
            proven = int(forest.proven[b, node])
            if proven == tree.UNPROVEN:
                continue
            state = forest.state[b, node]
            key = state.tobytes()
            if key not in cache:
                cache[key] = first_player_value(game, state)
            assert proven == cache[key], f"tree {b} node {node}: {proven} for {cache[key]}"
            proofs += not game.is_terminal(state)
    return proofs


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("name", GAMES)
def test_every_proof_is_the_exact_value_through_whole_games(name: str, algorithm: str) -> None:
    """Whole games from random positions, the trees kept between moves (PUCT): at every move
    each proven node of every tree matches the exact solver, and the solver proves positions
    that are not finished games."""
    game = make(name)
    positions = sample_positions(game, 12, seed=1)
    config = SearchConfig(algorithm=algorithm, num_simulations=300, solver=True)
    search = BatchedSearch(game, len(positions), config, seed=0)
    states, cache, proofs = np.stack(positions), {}, 0
    live = np.arange(len(states))
    while len(live):
        out = search.search(states[live], uniform, add_noise=True, temperature=1.0)
        proofs += check_proofs(game, search._forest, len(live), cache)
        for i, b in enumerate(live):
            if out.exact[i] != tree.UNPROVEN:
                assert out.exact[i] == solve(game, states[b])[0]
                assert out.root_value[i] == out.exact[i]
            states[b] = game.apply(states[b], int(out.action[i]))
        for i in reversed(range(len(live))):
            if game.is_terminal(states[live[i]]):  # the last row's game and tree take row i
                search.move_tree(len(live) - 1, i)
                live[i] = live[-1]
                live = live[:-1]
    assert proofs > 0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_forced_wins_are_proven_and_played(algorithm: str) -> None:
    """Tic-tac-toe positions won by force: the search proves most of them with 400 simulations,
    and wherever it proves one it plays a winning move."""
    game = make("tictactoe")
    won = [s for s in sample_positions(game, 200, seed=2) if solve(game, s)[0] == 1]
    config = SearchConfig(algorithm=algorithm, num_simulations=400, solver=True)
    out = BatchedSearch(game, len(won), config, seed=0).search(
        np.stack(won), uniform, add_noise=False, temperature=0.0
    )
    proven = out.exact == 1
    assert proven.mean() >= 0.8, f"{proven.sum()} of {len(won)} forced wins proven"
    assert not (out.exact == -1).any() and not (out.exact == 0).any()
    for state, action in zip(np.stack(won)[proven], out.action[proven], strict=True):
        assert int(action) in solve(game, state)[1]


def test_a_proven_root_stops_the_search_early() -> None:
    """A win in one move: with ``stop_early`` the solver ends the search once the root is
    proven, long before the simulations asked for, and plays the win."""
    game = make("tictactoe")
    state = game.initial_state()
    for action in (0, 3, 1, 4):  # X on 0 and 1, O on 3 and 4: X wins at 2
        state = game.apply(state, action)
    for solving in (True, False):
        config = SearchConfig(num_simulations=2000, solver=solving)
        out = BatchedSearch(game, 1, config).search(
            state[None], uniform, add_noise=False, temperature=0.0, stop_early=True
        )
        assert int(out.action[0]) == 2
        if solving:
            assert out.exact[0] == 1 and out.simulations[0] < 100
        else:
            assert out.exact[0] == tree.UNPROVEN and out.simulations[0] > 100


def test_the_move_played_follows_the_proofs() -> None:
    """``play_proven`` on a searched tree: the most visited move, once marked a proven loss, is
    replaced by another; a move marked a proven win is played whatever the visits say."""
    game = make("tictactoe")
    search = BatchedSearch(game, 1, SearchConfig(num_simulations=50))
    state = game.initial_state()
    out = search.search(state[None], uniform, add_noise=False, temperature=0.0)
    f = search._forest
    first, count = int(f.first_edge[0, 0]), int(f.num_edges[0, 0])
    edges = range(first, first + count)
    by_action = {int(f.edge_action[0, e]): e for e in edges}
    mover = int(state[layout.PLAYER])
    played = by_action[int(out.action[0])]

    def play() -> int:
        action, value, exact = out.action.copy(), np.zeros(1, np.float32), np.zeros(1, np.int8)
        solver.play_proven(f, 1, action, value, exact)
        return int(action[0])

    assert play() == int(out.action[0])  # nothing proven: unchanged
    f.proven[0, f.edge_child[0, played]] = tree.for_player(-1, mover)
    assert play() != int(out.action[0])
    least = min((e for e in edges if f.edge_child[0, e] >= 0), key=lambda e: f.edge_visits[0, e])
    f.proven[0, f.edge_child[0, least]] = tree.for_player(1, mover)
    assert play() == int(f.edge_action[0, least])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_without_the_solver_only_finished_games_are_proven(algorithm: str) -> None:
    game = make("tictactoe")
    positions = np.stack(sample_positions(game, 20, seed=3))
    config = SearchConfig(algorithm=algorithm, num_simulations=300)
    search = BatchedSearch(game, len(positions), config, seed=0)
    out = search.search(positions, uniform, add_noise=False, temperature=0.0)
    assert (out.exact == tree.UNPROVEN).all()
    f, finished = search._forest, 0
    for b in range(len(positions)):
        for node in range(int(f.node_count[b])):
            terminal = game.is_terminal(f.state[b, node])
            assert (f.proven[b, node] != tree.UNPROVEN) == terminal
            finished += terminal
    assert finished > 0


def test_the_solver_runs_on_uttt_with_several_leaves_a_call() -> None:
    """Ultimate tic-tac-toe near its end, searched with virtual loss: the proofs that the kernel
    finds agree with a second search without virtual loss wherever both prove the root."""
    game = make("uttt")
    positions = [s for s in sample_positions(game, 60, seed=4) if int(s[layout.MOVES]) > 40]
    config = SearchConfig(num_simulations=400, solver=True, leaves_per_tree=8)
    batched = BatchedSearch(game, len(positions), config, seed=0).search(
        np.stack(positions), uniform, add_noise=False, temperature=0.0
    )
    single = dataclasses.replace(config, leaves_per_tree=1)
    one = BatchedSearch(game, len(positions), single, seed=0).search(
        np.stack(positions), uniform, add_noise=False, temperature=0.0
    )
    both = (batched.exact != tree.UNPROVEN) & (one.exact != tree.UNPROVEN)
    assert both.sum() > 0
    np.testing.assert_array_equal(batched.exact[both], one.exact[both])
