"""The proof that the pipeline learns: the presets reach perfect play on the solved games.

Each test runs the real command (``scripts/train.py experiment=...``), then judges the saved
checkpoint itself, with its own positions and its own game-tree walks (tic-tac-toe: the network
agent at the raw policy and at 32, 200 and 800 simulations against every line of opponent
moves; numerical tic-tac-toe: its solved opening, games and positions), never the run's log.
The presets stop on their own once perfect or out of time (``train.max_minutes``: 20 for
numerical tic-tac-toe; tic-tac-toe's 3, lifted here, and its 200 iterations).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ultimate_rl.agents import make as make_agent
from ultimate_rl.games import Game, make, sample_positions, solve
from ultimate_rl.nn import load_checkpoint, make_evaluator
from ultimate_rl.train.checkpoints import CHECKPOINT

ROOT = Path(__file__).resolve().parents[1]
FIXED_SET = 1234  # seed of the fixed position set (the same set as eval.positions_seed)


def run_preset(preset: str, run_dir: Path, timeout: float, *overrides: str) -> None:
    command = [
        sys.executable,
        "scripts/train.py",
        f"experiment={preset}",
        f"hydra.run.dir={run_dir}",
        "train.progress_bar=false",
        *overrides,
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr


class RawPolicy:
    """The checkpoint's network alone: its most likely legal move."""

    def __init__(self, run_dir: Path, game: Game) -> None:
        checkpoint = load_checkpoint(run_dir / CHECKPOINT, expected_game=game)
        self.evaluate = make_evaluator(checkpoint.build_model("cpu"), "cpu")
        self.game = game

    def __call__(self, state: np.ndarray) -> int:
        mask = self.game.legal_mask(state)
        logits, _ = self.evaluate(self.game.encode(state)[None], mask[None])
        return int(np.flatnonzero(mask)[np.argmax(logits[0][mask])])


class SearchAgent:
    """The checkpoint played by ``ultimate_rl.agents``' network agent (search, no noise), as a
    user plays it."""

    def __init__(self, run_dir: Path, game: Game, num_simulations: int) -> None:
        self.agent = make_agent(
            "network",
            checkpoint=run_dir / CHECKPOINT,
            num_simulations=num_simulations,
            seed=0,
        )
        self.game = game

    def __call__(self, state: np.ndarray) -> int:
        return int(self.agent.select_action(self.game, state))

    def choices(self, state: np.ndarray) -> list[int]:
        """Every move the agent may play: the most visited, ties broken by the network's prior
        (the order of its logits), and exact ties of both at random (``tree.greedy_score``)."""
        if self.agent.num_simulations == 0:
            return [self(state)]
        visits = self.agent.analyse(self.game, state).visit_counts
        mask = self.game.legal_mask(state)
        logits = self.agent.evaluate(self.game.encode(state)[None], mask[None])[0][0]
        tied = np.flatnonzero(visits == visits.max())
        return tied[logits[tied] == logits[tied].max()].tolist()


def optimal_rate(
    game: Game, policy: Callable[[np.ndarray], int], positions: list[np.ndarray]
) -> float:
    return float(np.mean([policy(s) in set(solve(game, s)[1].tolist()) for s in positions]))


def lost_lines(
    game: Game,
    choices: Callable[[np.ndarray], list[int]],
    state: np.ndarray,
    side: int,
    line: tuple[int, ...] = (),
) -> list[tuple[int, ...]]:
    """Every line of the opponent's legal moves (any move, not only the solver's) on which a
    player making any move of ``choices``, as ``side``, loses: the moves from ``state``."""
    if game.is_terminal(state):
        first = game.returns(state)
        return [line] if (first if side == 0 else -first) < 0 else []
    moves = choices(state) if game.current_player(state) == side else game.legal_actions(state)
    return [
        lost
        for move in map(int, moves)
        for lost in lost_lines(game, choices, game.apply(state, move), side, (*line, move))
    ]


BUDGETS = (0, 32, 200, 800)  # the raw policy and the searches a user may play it with


def assert_never_loses(run_dir: Path, game: Game) -> None:
    """The checkpoint, judged perfect by its run, as the network agent plays it at every budget
    of ``BUDGETS`` (its defaults: each position searched on a fresh tree, as the verdict walked
    it), loses no line of any opponent, as first or as second player, whichever of its tied
    moves it picks; this walk is a recursion of its own, not ``agents.every_line``'s."""
    lost = {}
    for budget in BUDGETS:
        policy = SearchAgent(run_dir, game, budget)
        assert policy.agent.checkpoint.judged_perfect
        assert not policy.agent.search_config.tree_reuse
        for side in (0, 1):
            found = lost_lines(game, policy.choices, game.initial_state(), side)
            if found:
                lost[(budget, "XO"[side])] = (len(found), found[0])
    assert not lost, f"(simulations, side): (lost lines, the first) {lost}"


def results_vs_sampled_solver(
    game: Game, policy: Callable[[np.ndarray], int], side: int, games: int, seed: int
) -> list[float]:
    """Results of ``games`` games against the solver picking at random among its best moves."""
    rng = np.random.default_rng(seed)
    results = []
    for _ in range(games):
        state = game.initial_state()
        while not game.is_terminal(state):
            if game.current_player(state) == side:
                action = policy(state)
            else:
                action = int(rng.choice(solve(game, state)[1]))
            state = game.apply(state, action)
        results.append(game.returns(state) * (1 if side == 0 else -1))
    return results


SCALED = [  # the same preset through async self-play, through Ray actors, and both together
    ["train.mode=async"],
    ["selfplay.backend=ray", "selfplay.workers=2"],
    ["selfplay.backend=ray", "selfplay.workers=2", "train.mode=async"],
]


# self-play through the bf16 path (the judging stays float32): on the AMD VM it reached perfect
# play at iteration 222 with the default seed (float32: 72) and at 196, 138 and 96 with seeds
# 1-3, so it gets twice the preset's 200 iterations (~70 s in CI, so it runs with the slow
# suite; tests/test_inference.py checks the bf16 evaluations against float32 in the default one)
BF16 = ["selfplay.inference=torch_bf16", "train.iterations=400"]


@pytest.mark.parametrize(
    "overrides",
    [
        [],
        pytest.param(BF16, marks=pytest.mark.slow, id="bf16"),
        *(pytest.param(o, marks=pytest.mark.slow, id=" ".join(o)) for o in SCALED),
    ],
)
def test_tictactoe_quick_reaches_perfect_play(tmp_path: Path, overrides: list[str]):
    if any("ray" in o for o in overrides):
        pytest.importorskip("ray")
    # the preset's 200 iterations bound it; its 3 minutes are too few on a machine loaded 10
    # deep (measured: seed 0 perfect at iteration 52 after 4.1 minutes), so they are lifted here
    run_preset("tictactoe_quick", tmp_path, 900, "train.max_minutes=12", *overrides)
    game = make("tictactoe")
    assert_never_loses(tmp_path, game)
    policy = RawPolicy(tmp_path, game)
    assert optimal_rate(game, policy, sample_positions(game, 200, seed=FIXED_SET)) >= 0.98


@pytest.mark.slow
def test_numerical_ttt_learns_the_solved_result(tmp_path: Path):
    """The preset's first 25 minutes, judged on its checkpoint: the solved opening and games
    (seed 0's run had won every game against the solver as first player from ~14 minutes, with
    0.90-0.93 of the random-play positions' moves optimal at 20-30). Its every-line verdict
    takes the whole run (198 minutes for seed 0): ``tests/test_perfect_agent.py`` walks that
    run's network, shipped in checkpoints/."""
    run_preset("numerical_ttt", tmp_path, 2400, "train.max_minutes=25")
    game = make("numerical_ttt")
    policy = SearchAgent(tmp_path, game, num_simulations=64)  # as the preset evaluates it
    opening = policy(game.initial_state())
    cell, number = divmod(opening, 9)
    assert cell in (1, 3, 5, 7) and number + 1 in (1, 3, 7, 9), opening
    assert min(results_vs_sampled_solver(game, policy, side=0, games=100, seed=5)) == 1
    assert optimal_rate(game, policy, sample_positions(game, 200, seed=FIXED_SET)) >= 0.88
