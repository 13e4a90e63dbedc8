"""Batched PUCT / Gumbel search: exact-value play on tic-tac-toe, batching, reuse, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from ultimate_rl.games import layout, make, solve
from ultimate_rl.search import ALGORITHMS, BatchedSearch, SearchConfig, SearchError, tree
from ultimate_rl.search.config import SearchParams
from ultimate_rl.search.core import REGISTRY
from ultimate_rl.search.gumbel import halving_schedule
from ultimate_rl.search.puct import PUCT
from ultimate_rl.search.tree import greedy_score, new_forest, principal_variation


@pytest.fixture(scope="module")
def ttt():
    return make("tictactoe")


@pytest.fixture(scope="module")
def uttt():
    return make("uttt")


@pytest.fixture(scope="module")
def solver_evaluator(ttt, ttt_positions):
    """Uniform priors and the exact value (from the solver) of each leaf."""

    def evaluate(planes, masks):
        values = np.array(
            [solve(ttt, ttt_positions[p.tobytes()])[0] for p in planes], dtype=np.float32
        )
        return np.zeros(masks.shape, np.float32), values

    return evaluate


def _hash_evaluator(num_actions: int, seed: int = 0):
    """A deterministic stand-in network: fixed random projections of the planes."""
    rng = np.random.default_rng(seed)
    cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def evaluate(planes, masks):
        size = planes[0].size
        if size not in cache:
            cache[size] = (0.2 * rng.normal(size=(size, num_actions)), 0.2 * rng.normal(size=size))
        policy_w, value_w = cache[size]
        flat = planes.reshape(len(planes), -1).astype(np.float64)
        return (flat @ policy_w).astype(np.float32), np.tanh(flat @ value_w).astype(np.float32)

    return evaluate


def _test_positions(ttt, ttt_positions):
    """Non-terminal positions where some moves are not optimal, in a fixed order."""
    chosen = []
    for state in ttt_positions.values():
        if ttt.is_terminal(state) or state[layout.MOVES] < 2:
            continue
        _, optimal = solve(ttt, state)
        if len(optimal) < len(ttt.legal_actions(state)):
            chosen.append(state)
    chosen.sort(key=lambda s: s.tobytes())
    return chosen[::25]


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_exact_values_give_optimal_moves(ttt, ttt_positions, solver_evaluator, algorithm):
    positions = _test_positions(ttt, ttt_positions)
    assert len(positions) >= 20
    config = SearchConfig(algorithm=algorithm, num_simulations=64, temperature=0.0)
    searcher = BatchedSearch(ttt, len(positions), config, seed=0)
    out = searcher.search(np.stack(positions), solver_evaluator, add_noise=False)
    for i, state in enumerate(positions):
        legal = ttt.legal_actions(state)
        _, optimal = solve(ttt, state)
        assert out.action[i] in optimal, (ttt.render(state), out.visit_counts[i])
        # the policy target prefers optimal moves to the (uniform) prior
        assert out.policy_target[i, optimal].sum() > len(optimal) / len(legal)
        np.testing.assert_allclose(out.prior[i, legal], 1.0 / len(legal), rtol=1e-5)


def test_gumbel_improves_on_its_prior_with_few_simulations(ttt, ttt_positions, solver_evaluator):
    positions = _test_positions(ttt, ttt_positions)
    config = SearchConfig(algorithm="gumbel", num_simulations=8, gumbel_num_considered=4)
    out = BatchedSearch(ttt, len(positions), config, seed=0).search(
        np.stack(positions), solver_evaluator, add_noise=True
    )
    optimal_mass = [
        out.policy_target[i, solve(ttt, s)[1]].sum() - out.prior[i, solve(ttt, s)[1]].sum()
        for i, s in enumerate(positions)
    ]
    assert np.mean(optimal_mass) > 0.2
    assert np.allclose(out.policy_target.sum(axis=1), 1.0, atol=1e-5)
    assert (out.visit_counts.sum(axis=1) == 8).all()


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_batched_search_equals_searching_each_game_alone(uttt, algorithm):
    states = np.stack(
        [uttt.initial_state(), uttt.apply_sequence([40]), uttt.apply_sequence([40, 36, 4])]
    )
    evaluate = _hash_evaluator(uttt.num_actions)
    config = SearchConfig(algorithm=algorithm, num_simulations=50, temperature=0.0)
    together = BatchedSearch(uttt, 3, config, seed=0).search(states, evaluate, add_noise=False)
    for i, state in enumerate(states):
        alone = BatchedSearch(uttt, 1, config, seed=0).search(state[None], evaluate, False)
        np.testing.assert_array_equal(together.visit_counts[i], alone.visit_counts[0])
        np.testing.assert_allclose(together.root_value[i], alone.root_value[0], rtol=1e-5)
        assert together.action[i] == alone.action[0]


def test_tree_reuse_keeps_the_subtree(uttt):
    evaluate = _hash_evaluator(uttt.num_actions)
    config = SearchConfig(num_simulations=100, temperature=0.0)
    searcher = BatchedSearch(uttt, 2, config, seed=0)
    start = np.stack([uttt.initial_state()] * 2)
    out = searcher.search(start, evaluate, add_noise=False)
    action = int(out.action[0])
    kept = int(out.visit_counts[0, action]) - 1  # the child's own evaluation is not a move visit
    assert kept > 0
    after = np.stack([uttt.apply(start[0], action)] * 2)  # each tree finds the child by its state
    again = searcher.search(after, evaluate, add_noise=False, num_simulations=30)
    assert again.visit_counts[0].sum() == kept + 30
    assert again.visit_counts[1].sum() == kept + 30
    fresh = BatchedSearch(uttt, 1, SearchConfig(num_simulations=30, tree_reuse=False), seed=0)
    fresh.search(start[:1], evaluate, add_noise=False, num_simulations=100)
    assert fresh.search(after[:1], evaluate, False).visit_counts.sum() == 30


def test_reset_and_unknown_moves_start_new_trees(uttt):
    evaluate = _hash_evaluator(uttt.num_actions)
    searcher = BatchedSearch(uttt, 1, SearchConfig(num_simulations=20), seed=0)
    state = uttt.initial_state()[None]
    searcher.search(state, evaluate, add_noise=False)
    assert searcher.search(state, evaluate, False).visit_counts.sum() == 40  # same root: kept
    searcher.reset(0)
    assert searcher.search(state, evaluate, False).visit_counts.sum() == 20
    far = uttt.apply_sequence([40, 36, 4])[None]  # three moves on: not in the tree
    assert searcher.search(far, evaluate, False).visit_counts.sum() == 20


def test_several_leaves_per_tree_use_fewer_evaluation_calls(uttt):
    calls = []
    inner = _hash_evaluator(uttt.num_actions)

    def evaluate(planes, masks):
        calls.append(len(planes))
        return inner(planes, masks)

    config = SearchConfig(num_simulations=64, leaves_per_tree=8)
    states = np.stack([uttt.initial_state()] * 4)
    out = BatchedSearch(uttt, 4, config, seed=0).search(states, evaluate, add_noise=True)
    assert (out.visit_counts.sum(axis=1) == 64).all()
    assert len(calls) < 40 and max(calls) > 4  # 1 root call + about 64 / 8 steps


def test_noise_and_temperature_are_seeded(uttt):
    evaluate = _hash_evaluator(uttt.num_actions)
    states = np.stack([uttt.initial_state()] * 8)

    def run(seed):
        searcher = BatchedSearch(uttt, 8, SearchConfig(num_simulations=40), seed=seed)
        return searcher.search(states, evaluate, add_noise=True, temperature=1.0)

    a, b, c = run(1), run(1), run(2)
    np.testing.assert_array_equal(a.visit_counts, b.visit_counts)
    np.testing.assert_array_equal(a.action, b.action)
    assert not np.array_equal(a.visit_counts, c.visit_counts)
    assert not (a.visit_counts == a.visit_counts[0]).all()  # noise differs per game
    np.testing.assert_allclose(
        a.prior, np.broadcast_to(a.prior[0], a.prior.shape)
    )  # the reported prior has no noise
    greedy = BatchedSearch(uttt, 8, SearchConfig(num_simulations=40), seed=0).search(
        states, evaluate, add_noise=True, temperature=0.0
    )
    assert (greedy.visit_counts[np.arange(8), greedy.action] == greedy.visit_counts.max(1)).all()


def test_terminal_leaves_use_the_exact_result(ttt):
    state = ttt.apply_sequence([0, 3, 1, 4])  # X wins at 2

    def pessimist(planes, masks):  # claims every position is lost for the player to move
        return np.zeros(masks.shape, np.float32), -np.ones(len(planes), np.float32)

    out = BatchedSearch(ttt, 1, SearchConfig(num_simulations=50, temperature=0.0)).search(
        state[None], pessimist, add_noise=False
    )
    assert out.action[0] == 2
    assert out.q_values[0, 2] == 1.0


def test_halving_schedule():
    table = halving_schedule(4, 16)
    assert table[1].tolist() == list(range(16))
    assert table[2, :8].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    # four moves, two phases of 8: each move twice, then the two survivors 4 more times each
    assert table[4].tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


def _constant(logits=None, values=None):
    def evaluate(planes, masks):
        n, a = masks.shape
        return (
            np.zeros((n, a), np.float32) if logits is None else logits(n, a),
            np.zeros(n, np.float32) if values is None else values(n),
        )

    return evaluate


@pytest.mark.parametrize(
    ("evaluate", "message"),
    [
        (_constant(logits=lambda n, a: np.zeros((n, a - 1))), "policy_logits of shape"),
        (_constant(values=lambda n: np.zeros((n, 1))), "values of shape"),
        (_constant(values=lambda n: np.full(n, np.nan)), "NaN"),
        (_constant(values=lambda n: np.full(n, 2.0)), "outside"),
        (_constant(logits=lambda n, a: np.full((n, a), np.inf)), "logits"),
        (lambda planes, masks: np.zeros(masks.shape), "pair"),
    ],
)
def test_misbehaving_evaluators_raise(ttt, evaluate, message):
    searcher = BatchedSearch(ttt, 1, SearchConfig(num_simulations=4))
    with pytest.raises(SearchError, match=message):
        searcher.search(ttt.initial_state()[None], evaluate, add_noise=False)


def test_bad_search_input_raises(ttt):
    searcher = BatchedSearch(ttt, 2, SearchConfig(num_simulations=4))
    evaluate = _constant()
    state = ttt.initial_state()
    for sims in (0, -3, 2.5):
        with pytest.raises(SearchError, match="num_simulations"):
            searcher.search(state[None], evaluate, False, num_simulations=sims)
    with pytest.raises(SearchError, match="shape"):
        searcher.search(state, evaluate, False)
    with pytest.raises(SearchError, match="batch_size"):
        searcher.search(np.stack([state] * 3), evaluate, False)
    with pytest.raises(SearchError, match="finished"):
        searcher.search(ttt.apply_sequence([0, 3, 1, 4, 2])[None], evaluate, False)
    with pytest.raises(SearchError, match="temperature"):
        searcher.search(state[None], evaluate, False, temperature=-1.0)
    with pytest.raises(SearchError, match="not 'tictactoe'"):
        searcher.search(make("uttt").initial_state()[None], evaluate, False)
    with pytest.raises(SearchError, match="tree index"):
        searcher.reset(5)


@pytest.mark.parametrize(
    "options",
    [
        {"num_simulations": 0},
        {"algorithm": "alphabeta"},
        {"c_puct": 0.0},
        {"dirichlet_fraction": 1.5},
        {"leaves_per_tree": 0},
        {"virtual_loss": float("nan")},
    ],
)
def test_bad_config_raises(options):
    with pytest.raises(SearchError):
        SearchConfig(**options)


def test_config_from_dict_names_unknown_keys():
    assert SearchConfig.from_dict({"num_simulations": 3}).num_simulations == 3
    with pytest.raises(SearchError, match="num_simulation'"):
        SearchConfig.from_dict({"num_simulation": 3})


def test_search_params_record_carries_the_config_by_name():
    params = SearchParams.from_config(SearchConfig(algorithm="gumbel", c_puct=2.0, c_visit=7.0))
    assert ALGORITHMS[params.algorithm] == "gumbel"
    assert (params.c_puct, params.c_visit, params.leaves_per_tree) == (2.0, 7.0, 1)
    assert params.virtual_loss == 0.0  # one leaf per tree: no descent can collide with another
    several = SearchParams.from_config(SearchConfig(leaves_per_tree=4, virtual_loss=2.0))
    assert (several.virtual_loss, several.leaves_per_tree) == (2.0, 4)
    # the kernels reach each algorithm through the registry (derived from the names) by this index
    assert tuple(algorithm.name for algorithm in REGISTRY) == ALGORITHMS


def _subtree(f, b, node):
    """Nodes of ``node``'s subtree in tree ``b``, and its moves' (visits, value sums) by action."""
    nodes, frontier = [], [node]
    while frontier:
        n = frontier.pop()
        nodes.append(n)
        first = f.first_edge[b, n]
        for e in range(first, first + max(f.num_edges[b, n], 0)):
            if f.edge_child[b, e] >= 0:
                frontier.append(int(f.edge_child[b, e]))
    first = f.first_edge[b, node]
    edges = range(first, first + f.num_edges[b, node])
    moves = {int(f.edge_action[b, e]): (f.edge_visits[b, e], f.edge_value_sum[b, e]) for e in edges}
    return nodes, moves


def _most_visited_child(f, b, node):
    first = f.first_edge[b, node]
    edges = np.arange(first, first + f.num_edges[b, node])
    return int(f.edge_child[b, edges[np.argmax(f.edge_visits[b, edges])]])


def test_tree_reuse_two_moves_on_keeps_the_subtree_statistics(uttt):
    searcher = BatchedSearch(uttt, 1, SearchConfig(num_simulations=300), seed=0)
    searcher.search(uttt.initial_state()[None], _hash_evaluator(uttt.num_actions), False)
    f = searcher._forest  # the storage itself: what re-rooting must keep
    grandchild = _most_visited_child(f, 0, _most_visited_child(f, 0, 0))
    nodes, moves = _subtree(f, 0, grandchild)
    assert len(nodes) > 1
    state = f.state[0, grandchild].copy()
    assert tree.keep_subtree(f, 0, state)
    assert np.array_equal(f.state[0, 0], state) and f.parent[0, 0] == -1
    assert f.node_count[0] == len(nodes)
    assert _subtree(f, 0, 0)[1] == moves
    for node in range(1, len(nodes)):  # every kept node hangs from the edge that leads to it
        assert f.edge_child[0, f.parent_edge[0, node]] == node
    assert not tree.keep_subtree(f, 0, uttt.apply_sequence([40, 36, 4]))  # not in the tree


def test_a_moved_tree_keeps_its_statistics_and_leaves_its_row_empty(uttt):
    evaluate = _hash_evaluator(uttt.num_actions)
    searcher = BatchedSearch(uttt, 2, SearchConfig(num_simulations=20), seed=0)
    states = np.stack([uttt.initial_state(), uttt.apply_sequence([40])])
    first = searcher.search(states, evaluate, add_noise=False)
    searcher.move_tree(1, 0)
    again = searcher.search(states[[1, 1]], evaluate, add_noise=False)
    assert again.visit_counts[0].sum() == 40  # tree 1's 20 visits came along to row 0
    assert again.visit_counts[1].sum() == 20  # row 1 starts afresh
    np.testing.assert_array_equal(again.visit_counts[1], first.visit_counts[1])
    with pytest.raises(SearchError, match="tree index"):
        searcher.move_tree(0, 2)


def test_a_saved_tree_searches_on_as_the_tree_it_was_copied_from(uttt):
    """A tree saved from one search goes on, restored into another row of a searcher whose
    arrays are too small for it (they grow), exactly as the original tree goes on; a row
    restored with an empty tree searches afresh."""
    evaluate = _hash_evaluator(uttt.num_actions)
    config = SearchConfig(num_simulations=300)
    big = BatchedSearch(uttt, 1, config, seed=0)
    big.search(uttt.initial_state()[None], evaluate, False, temperature=0.0)
    later = uttt.apply_sequence(big.principal_variation(0)[:2])
    saved, empty = big.saved_tree(0), BatchedSearch(uttt, 1, config).saved_tree(0)
    small = BatchedSearch(uttt, 3, SearchConfig(num_simulations=2), seed=0)
    assert small._forest.visits.shape[1] < saved.visits.shape[1] == saved.node_count[0]
    small.restore_tree(1, saved)
    small.restore_tree(2, empty)
    states = np.stack([later, later, later])
    got = small.search(states, evaluate, False, num_simulations=300, temperature=0.0)
    kept = big.search(later[None], evaluate, False, temperature=0.0)
    fresh = BatchedSearch(uttt, 1, config, seed=0).search(later[None], evaluate, False)
    assert got.visit_counts[1].sum() > 300  # the restored tree's visits came along
    np.testing.assert_array_equal(got.visit_counts[1], kept.visit_counts[0])
    np.testing.assert_array_equal(got.visit_counts[2], fresh.visit_counts[0])
    with pytest.raises(SearchError, match="tree index"):
        small.restore_tree(3, saved)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_principal_variation_follows_the_most_visited_moves(ttt, solver_evaluator, algorithm):
    state = ttt.apply_sequence([0, 4])
    searcher = BatchedSearch(ttt, 1, SearchConfig(algorithm=algorithm, num_simulations=200))
    out = searcher.search(state[None], solver_evaluator, add_noise=False, temperature=0.0)
    pv = searcher.principal_variation(0)
    assert len(pv) >= 3 and pv[0] == int(np.argmax(out.visit_counts[0]))
    f, node = searcher._forest, 0
    for move in pv:  # each move is the most visited one where the line has got to
        first, n = f.first_edge[0, node], f.num_edges[0, node]
        edges = range(first, first + n)
        best = max(edges, key=lambda e: (f.edge_visits[0, e], f.edge_prior[0, e]))
        assert f.edge_action[0, best] == move
        node = f.edge_child[0, best]
    ttt.apply_sequence(pv, state)  # a line of legal moves
    assert len(searcher.principal_variation(0, max_moves=2)) == 2


def test_the_principal_variation_breaks_ties_in_visits_by_the_prior():
    """As the move played does: the analysis line starts with the move the agent plays."""
    f = new_forest(1, 4, 4)
    f.first_edge[0, 0], f.num_edges[0, 0] = 0, 3
    f.edge_action[0, :3], f.edge_visits[0, :3] = [5, 6, 7], [3, 3, 1]
    f.edge_prior[0, :3], f.edge_child[0, :3] = [0.2, 0.5, 0.3], [-1, 1, -1]
    f.first_edge[0, 1], f.num_edges[0, 1] = 3, 1
    f.edge_action[0, 3], f.edge_visits[0, 3], f.edge_child[0, 3] = 2, 2, -1
    assert principal_variation(f, 0, 5) == [6, 2]
    f.edge_prior[0, :3] = [0.5, 0.2, 0.3]
    assert principal_variation(f, 0, 5) == [5]


def test_a_greedy_choice_breaks_ties_in_visits_by_the_prior():
    """Temperature 0 plays the most visited move; where visits tie, the network's favourite of
    them every time (the every-line walk then follows one move), and only where the prior ties
    too, a draw among those."""
    visits = np.array([[4, 9, 9, 1], [4, 9, 9, 1], [5, 5, 5, 5]], np.int32)
    prior = np.array([[0.7, 0.1, 0.15, 0.05], [0.1, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.4]])
    prior = prior.astype(np.float32)
    config, moves = SearchConfig(), set()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        _, action = PUCT.choose(None, None, visits, prior, np.zeros(3), config, rng)
        assert action[0] == 2 and action[2] == 3
        moves.add(int(action[1]))
    assert moves == {1, 2}
    # the score keeps the visits' order: a prior never outweighs a visit
    score = greedy_score(np.array([[3, 2]]), np.array([[0.0, 1.0]]))
    assert score[0, 0] > score[0, 1]
