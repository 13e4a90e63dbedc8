"""``BatchedSearch``: many games' AlphaZero searches (PUCT or Gumbel) advanced together, with all
their leaves evaluated in ONE network call per simulation step.

The network is only the ``Evaluator`` callable (this package never imports ``nn``). Which
algorithm runs is chosen once, from the config; the loop itself is ``core.py``'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ultimate_rl.games import kernels, layout
from ultimate_rl.games.base import Game
from ultimate_rl.search import solver, tree
from ultimate_rl.search.algorithm import Roots, Settled
from ultimate_rl.search.config import SearchConfig, SearchError, SearchParams, check_count
from ultimate_rl.search.core import REGISTRY, expand_leaves, new_leaf_batch, simulate, start_roots

PREALLOCATED_SIMULATIONS = 4096

Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``evaluate(planes [N, C, H, W] float32, masks [N, A] bool) -> (logits [N, A], values [N])``;
values in [-1, 1] for the player to move at each position. (contract)"""


@dataclass(frozen=True)
class SearchOutput:
    """What one ``BatchedSearch.search`` call found, one row per game.

    ``policy_target`` is the training target: visit frequencies (PUCT) or the improved policy
    (Gumbel). ``q_values`` are mean values of root moves for the player to move (0 where
    unvisited: check ``visit_counts``). ``prior`` is the network's root policy, without noise.
    ``exact`` is the root's proven result for the player to move (``SearchConfig.solver``), -2
    (``tree.UNPROVEN``) where none is known; ``root_value`` is then that result.
    """

    policy_target: np.ndarray  # [B, A] float32
    visit_counts: np.ndarray  # [B, A] int32
    root_value: np.ndarray  # [B] float32, the player to move's expected result
    action: np.ndarray  # [B] int64, the move to play
    q_values: np.ndarray  # [B, A] float32
    prior: np.ndarray  # [B, A] float32
    simulations: np.ndarray  # [B] int64, the simulations run (fewer on a deadline or early stop)
    exact: np.ndarray  # [B] int8: -1 / 0 / 1 when proven, else -2


def keeps_trees(config: SearchConfig) -> bool:
    """Whether a search of ``config`` starts from the subtree the last move's search left
    (``tree_reuse``, where the algorithm's statistics stay valid: PUCT), so that a game's move
    depends on the line that led to it."""
    return config.tree_reuse and REGISTRY[SearchParams.from_config(config).algorithm].reuses_trees


class BatchedSearch:
    """``batch_size`` search trees of one game, searched together for a network.

    Typical self-play loop::

        searcher = BatchedSearch(game, batch_size=256, config=SearchConfig())
        out = searcher.search(states, evaluate, add_noise=True)
        # play out.action[i] in game i, then pass the new states to the next search: with
        # tree_reuse, a tree whose root is an ancestor within two moves keeps that subtree.

    Tree ``i`` searches row ``i`` of ``states``; ``move_tree`` follows a game to another row and
    ``reset`` forgets a tree. ``num_simulations`` per call overrides the config, e.g. for
    playout-cap randomisation's fast moves. ``seed`` fixes the noise (Dirichlet, Gumbel) and the
    temperature sampling.
    """

    def __init__(
        self,
        game: Game,
        batch_size: int,
        config: SearchConfig | None = None,
        seed: int | None = None,
    ) -> None:
        check_count("batch_size", batch_size)
        self.game = game
        self.batch_size = int(batch_size)
        self.config = config if config is not None else SearchConfig()
        self.num_actions = int(game.num_actions)
        self._rng = np.random.default_rng(seed)
        self._params = SearchParams.from_config(self.config)
        self._algorithm = REGISTRY[self._params.algorithm]
        self._reuse = keeps_trees(self.config)
        slots = self.batch_size * self.config.leaves_per_tree
        self._leaves = new_leaf_batch(slots, game.observation_shape, self.num_actions)
        # room for a move's simulations (up to a few thousand; a longer search grows the arrays)
        nodes = 2 * (min(self.config.num_simulations, PREALLOCATED_SIMULATIONS) + 1)
        edges = nodes * min(self.num_actions, 16)
        self._forest = tree.new_forest(self.batch_size, nodes, edges)

    def reset(self, i: int) -> None:
        """Forgets tree ``i`` (a new game starts there)."""
        self._check_index(i)
        self._forest.node_count[i] = tree.EMPTY

    def saved_tree(self, i: int) -> tree.Forest:
        """A copy of tree ``i`` for ``restore_tree``: a caller that follows several
        continuations of one game (the every-line walk of a game with tree reuse) searches each
        from the tree the game had there."""
        self._check_index(i)
        return tree.copy_tree(self._forest, i)

    def restore_tree(self, i: int, saved: tree.Forest) -> None:
        """Tree ``i`` as ``saved_tree`` copied it (of this row or another; ``saved`` stays as it
        is)."""
        self._check_index(i)
        self._forest = tree.put_tree(self._forest, i, saved)

    def move_tree(self, source: int, target: int) -> None:
        """Moves tree ``source`` (with its subtree statistics) to index ``target``, dropping the
        tree there and leaving ``source`` empty: the game of row ``source`` now sits in row
        ``target``."""
        self._check_index(source)
        self._check_index(target)
        tree.move_tree(self._forest, source, target)

    def search(
        self,
        states: np.ndarray,
        evaluate: Evaluator,
        add_noise: bool,
        num_simulations: int | None = None,
        temperature: float | np.ndarray | None = None,
        deadline: float | None = None,
        stop_early: bool = False,
        interrupted: Callable[[], bool] | None = None,
        side: np.ndarray | None = None,
    ) -> SearchOutput:
        """Searches ``states`` ([n, STATE_LEN] int32, n <= batch_size, games not over) with tree
        ``i`` for row ``i``.

        ``add_noise``: Dirichlet noise at the root (PUCT) or Gumbel noise (Gumbel); use it in
        self-play, not in evaluation. ``temperature`` (scalar or per game; default the config's)
        sets PUCT's move choice: 0 plays the most visited move, 1 samples by visits. Gumbel plays
        the move its halving keeps.

        ``deadline`` (a ``time.perf_counter()`` instant) ends the search before a simulation step
        that the last step's duration says would end past it, so it overruns by at most one
        step (one network call); at least one step always runs. ``stop_early`` ends it once no
        tree's move can change in the simulations left (its root proven, or PUCT playing its
        most visited move: temperature 0); the simulations left are ``num_simulations`` less
        those done, or fewer when the deadline allows fewer at the last step's rate.
        ``interrupted`` (asked before each step after the first) ends it when it answers True:
        another thread wants the tree, e.g. a person's move during pondering. ``side`` ([n]
        players, default the players to move) is whom ``contempt`` plays for: a pondering
        agent searches its opponent's position for itself.
        """
        cfg = self.config
        num_simulations = cfg.num_simulations if num_simulations is None else num_simulations
        check_count("num_simulations", num_simulations)
        states = self._check_states(states)
        n = len(states)
        temperatures = self._check_temperature(temperature, n)
        self._start_roots(states, evaluate)
        roots = self._algorithm.make_roots(
            self._forest, n, self.num_actions, cfg, add_noise, num_simulations, self._rng
        )
        if cfg.contempt:
            sides = states[:, layout.PLAYER] if side is None else np.asarray(side)
            roots.draw_value[:] = np.where(sides == 0, -cfg.contempt, cfg.contempt)
        # the settled move is the most visited one: only a greedy choice (temperature 0) plays it
        greedy = (temperatures <= 0).all()
        settled = self._algorithm.settled if greedy else None
        done, step_seconds, steps, step_done = roots.simulations_done, 0.0, 0, 0
        while done.min() < num_simulations:
            now = time.perf_counter()
            if steps and deadline is not None and now + step_seconds > deadline:
                break
            if steps and interrupted is not None and interrupted():
                break
            if (
                steps
                and stop_early
                and self._settled(
                    n,
                    settled,
                    num_simulations - done,
                    deadline,
                    now,
                    step_done / max(step_seconds, 1e-9),
                )
            ):
                break
            before = done.copy()
            self._forest = tree.with_room(self._forest, cfg.leaves_per_tree, self.num_actions)
            pending = simulate(self._forest, n, self._params, roots, num_simulations, self._leaves)
            self._evaluate_and_expand(pending, evaluate)
            step_seconds, steps = time.perf_counter() - now, steps + 1
            step_done = (done - before).max()

        return self._output(n, roots, temperatures)

    def _output(self, n: int, roots: Roots, temperatures: np.ndarray) -> SearchOutput:
        """The finished search's root statistics and the move each tree plays."""
        visit_counts = np.zeros((n, self.num_actions), np.int32)
        q_values = np.zeros((n, self.num_actions), np.float32)
        prior = np.zeros((n, self.num_actions), np.float32)
        root_value = np.zeros(n, np.float32)
        tree.root_statistics(self._forest, n, visit_counts, q_values, prior, root_value)
        policy, action = self._algorithm.choose(
            self._forest, roots, visit_counts, prior, temperatures, self.config, self._rng
        )
        exact = np.full(n, tree.UNPROVEN, np.int8)
        if self.config.solver:
            solver.play_proven(self._forest, n, action, root_value, exact)
        simulations = roots.simulations_done.copy()
        return SearchOutput(
            policy, visit_counts, root_value, action, q_values, prior, simulations, exact
        )

    def principal_variation(self, i: int, max_moves: int = 20) -> list[int]:
        """The moves the last search of tree ``i`` expects (``tree.principal_variation``)."""
        self._check_index(i)
        return tree.principal_variation(self._forest, i, max_moves)

    def _start_roots(self, states: np.ndarray, evaluate: Evaluator) -> None:
        """Roots for ``states``: kept subtrees, or new roots evaluated by the network."""
        if self.config.rollouts:  # the playouts draw from numba's generator: seeded from ours
            kernels.seed(int(self._rng.integers(2**31 - 1)))
        self._forest = tree.with_room(self._forest, 1, self.num_actions)
        pending = start_roots(self._forest, states, self._reuse, self._leaves)
        self._evaluate_and_expand(pending, evaluate)

    def _settled(
        self,
        n: int,
        settled: Settled | None,
        remaining: np.ndarray,
        deadline: float | None,
        now: float,
        rate: float,
    ) -> bool:
        """Whether no tree's move can change any more: its root proven, or ``settled`` (the
        algorithm's test, None when it has none or the move is sampled) says so for the
        simulations left (fewer when the deadline allows fewer at ``rate`` per tree and second)."""
        done = solver.proven_roots(self._forest, n)
        if settled is not None and not done.all():
            if deadline is not None:
                remaining = np.minimum(remaining, rate * max(deadline - now, 0.0))
            done |= settled(self._forest, n, remaining)
        return bool(done.all())

    def _evaluate_and_expand(self, pending: int, evaluate: Evaluator) -> None:
        if pending == 0:
            return
        planes, masks = self._leaves.planes[:pending], self._leaves.masks[:pending]
        logits, values = self._check_evaluation(evaluate(planes, masks), masks)
        expand_leaves(self._forest, self._leaves, pending, logits, values, self._params)

    # --- input checks ----------------------------------------------------------------------------
    def _check_index(self, i: int) -> None:
        if not 0 <= i < self.batch_size:
            raise SearchError(f"tree index {i} is outside 0..{self.batch_size - 1}")

    def _check_states(self, states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if (
            states.ndim != 2
            or states.shape[1] != layout.STATE_LEN
            or states.dtype != layout.STATE_DTYPE
        ):
            raise SearchError(
                f"states must be an int32 array of shape [n, {layout.STATE_LEN}], got "
                f"{states.dtype} {states.shape}; stack states made by the game (np.stack([...]))"
            )
        if not 1 <= len(states) <= self.batch_size:
            raise SearchError(
                f"got {len(states)} states for a searcher of batch_size {self.batch_size}"
            )
        if (states[:, layout.GAME] != self.game.game_id).any():
            raise SearchError(f"some states are not {self.game.name!r} states")
        over = np.flatnonzero(states[:, layout.STATUS] != layout.ONGOING)
        if len(over):
            raise SearchError(f"cannot search finished games (rows {over.tolist()})")
        return np.ascontiguousarray(states)

    def _check_temperature(self, temperature: float | np.ndarray | None, n: int) -> np.ndarray:
        value = self.config.temperature if temperature is None else temperature
        temps = np.broadcast_to(np.asarray(value, np.float64), (n,)).copy()
        if not (np.isfinite(temps).all() and (temps >= 0).all()):
            raise SearchError(f"temperature must be finite and >= 0, got {temperature!r}")
        return temps

    def _check_evaluation(self, result: object, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, a = masks.shape
        if not (isinstance(result, tuple | list) and len(result) == 2):
            raise SearchError("evaluate must return a (policy_logits, values) pair")
        logits = np.asarray(result[0], dtype=np.float32)
        values = np.asarray(result[1], dtype=np.float32)
        if logits.shape != (n, a):
            raise SearchError(
                f"evaluate returned policy_logits of shape {logits.shape}, expected ({n}, {a}) "
                f"for {n} positions and {a} actions"
            )
        if values.shape != (n,):
            raise SearchError(
                f"evaluate returned values of shape {values.shape}, expected ({n},); "
                "flatten a [N, 1] value head with values.reshape(-1)"
            )
        if not np.isfinite(values).all():
            raise SearchError("evaluate returned NaN or infinite values")
        if np.abs(values).max() > 1.0 + 1e-4:
            raise SearchError(
                f"evaluate returned values outside [-1, 1] (max |v| = {np.abs(values).max():.3f}); "
                "squash the value head with tanh"
            )
        if not np.isfinite(logits).all() and not np.isfinite(np.where(masks, logits, 0.0)).all():
            raise SearchError("evaluate returned NaN or infinite policy logits for legal moves")
        return logits, values
