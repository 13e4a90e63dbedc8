"""Self-play, inference and training throughput for the ``uttt_cpu`` preset's network and search.

Figures:
- ``selfplay_positions_per_s``: moves played per second by one worker playing
  ``selfplay.parallel_games`` games at once to the end, on the default inference path
  (``make_evaluator(backend="auto")``); ``selfplay_positions_per_s_torch``: the same worker and
  settings on plain torch, measured in the same run; ``selfplay_speedup``: their ratio.
- ``selfplay_nn_time_fraction``: the share of the default path's wall time spent inside the
  network's ``evaluate`` (the rest is search and engine overhead).
- ``nn_positions_per_s_<backend>``: ``evaluate`` alone at batch ``NN_BATCH``, per backend.
- ``onnx_refresh_ms``: what an onnxruntime evaluator pays to pick up new weights (one export).
- ``agent_move_ms_<backend>``: the shipped agent's time per move at 200 simulations, per backend.
- ``agent_default_move_s_mean`` / ``_max``: the shipped agent at the search its file stores (what
  a player meets; issue 15's "at most one second per move" reads the max), over whole games.
- ``train_samples_per_s``: positions per second through the optimiser, augmentation included,
  at the preset's ``train.precision`` (auto: bf16 on CUDA and on CPUs with AMX);
  ``train_samples_per_s_fp32``: the same learner in float32, measured alternately in the same
  run; ``train_precision_speedup``: their ratio (1.0 where auto means float32).

One thread, the preset's own settings, after a warm-up that compiles kernels. Backends are
measured alternately (self-play: two rounds each, torch-default-default-torch) so that other
load on the machine affects them alike.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ultimate_rl.agents.match import one_by_one, play_games
from ultimate_rl.games import Game, random_opening, sample_positions
from ultimate_rl.loading import load_agent
from ultimate_rl.nn import OnnxEvaluator, make_evaluator
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlayWorker
from ultimate_rl.train.config import check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config

PRESET = "uttt_cpu"
BACKENDS = ("torch", "onnxruntime")
NN_BATCH = 256
AGENT = Path(__file__).resolve().parents[2] / "checkpoints" / "uttt_agent.urla"
AGENT_SIMULATIONS = 200
AGENT_POSITIONS = 6
AGENT_GAMES = 2


def run(cfg: Any) -> dict[str, float]:
    """The figures above; ``cfg.seconds`` bounds the inference and training measurements."""
    torch.set_num_threads(1)
    seconds = float(cfg.seconds)
    overrides, cpu = [f"experiment={PRESET}", "device=cpu"], torch.device("cpu")
    checked = check_config(compose_train_config(overrides))
    game = checked.game
    learner = Learner(checked, cpu)
    model = learner.model
    worker = SelfPlayWorker(game, checked.search, checked.selfplay)
    rng = np.random.default_rng(0)
    evaluators = {
        "default": make_evaluator(model, "cpu"),
        "torch": make_evaluator(model, "cpu", backend="torch"),
    }
    worker.play(evaluators["default"], 2, rng)  # warm-up: compiles the search kernels
    totals = {name: np.zeros(4) for name in evaluators}  # moves, seconds, nn_seconds, simulations
    for name in ("torch", "default", "default", "torch"):  # drifting load hits both alike
        data = worker.play(evaluators[name], checked.selfplay.parallel_games, rng)
        stats = data.stats
        totals[name] += (stats.moves, stats.seconds, stats.nn_seconds, stats.simulations)
    moves, spent, nn_spent, simulations = totals["default"]
    torch_rate = totals["torch"][0] / totals["torch"][1]
    figures = {
        "selfplay_positions_per_s": moves / spent,
        "selfplay_positions_per_s_torch": torch_rate,
        "selfplay_speedup": moves / spent / torch_rate,
        "selfplay_nn_time_fraction": nn_spent / spent,
        "selfplay_simulations_per_s": simulations / spent,
        **nn_rates(model, seconds),
        "onnx_refresh_ms": refresh_ms(model),
        **agent_move_ms(game),
        **agent_default_move_seconds(game),
    }
    fp32 = Learner(check_config(compose_train_config([*overrides, "train.precision=fp32"])), cpu)
    figures.update(train_rates({"": learner, "_fp32": fp32}, data, seconds))
    return figures


def nn_rates(model: PolicyValueNet, seconds: float) -> dict[str, float]:
    """Positions per second through each backend's ``evaluate`` at batch ``NN_BATCH``."""
    rng = np.random.default_rng(1)
    planes = (rng.random((NN_BATCH, *model.observation_shape)) < 0.3).astype(np.float32)
    masks = np.ones((NN_BATCH, model.num_actions), dtype=bool)
    evaluators = {b: make_evaluator(model, "cpu", backend=b) for b in BACKENDS}
    spent = dict.fromkeys(BACKENDS, 0.0)
    calls = dict.fromkeys(BACKENDS, 0)
    for evaluate in evaluators.values():
        evaluate(planes, masks)  # warm-up (and the onnxruntime session)
    while min(spent.values()) < seconds:
        for backend, evaluate in evaluators.items():
            start = time.perf_counter()
            evaluate(planes, masks)
            spent[backend] += time.perf_counter() - start
            calls[backend] += 1
    return {f"nn_positions_per_s_{b}": calls[b] * NN_BATCH / spent[b] for b in BACKENDS}


def refresh_ms(model: PolicyValueNet, repeats: int = 5) -> float:
    """Median milliseconds an onnxruntime evaluator takes to load new weights."""
    evaluate = OnnxEvaluator(model)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        evaluate.refresh()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def agent_move_ms(game: Game) -> dict[str, float]:
    """Mean milliseconds per move of the shipped agent (200 PUCT simulations), per backend,
    over a few fixed positions, the backends alternating position by position."""
    agents = {
        b: load_agent(AGENT, num_simulations=AGENT_SIMULATIONS, inference=b, seed=0)
        for b in BACKENDS
    }
    positions = [game.initial_state(), *sample_positions(game, AGENT_POSITIONS - 1, 7)]
    spent = dict.fromkeys(BACKENDS, 0.0)
    for agent in agents.values():
        agent.select_action(game, positions[0])  # warm-up
    for state in positions:
        for backend, agent in agents.items():
            start = time.perf_counter()
            agent.select_action(game, state)
            spent[backend] += time.perf_counter() - start
    return {f"agent_move_ms_{b}": 1000 * spent[b] / len(positions) for b in BACKENDS}


def agent_default_move_seconds(game: Game) -> dict[str, float]:
    """Mean and slowest seconds per move of the shipped agent at its file's own defaults, over
    ``AGENT_GAMES`` games against itself from random 2-move openings, one at a time (each side
    its own agent and tree, as in a match); the agent warms up when it loads, so every move
    counts."""
    sides = (
        one_by_one(game, load_agent(AGENT, seed=0)),
        one_by_one(game, load_agent(AGENT, seed=1)),
    )
    rng = np.random.default_rng(0)
    times = []
    for _ in range(AGENT_GAMES):
        start = game.apply_sequence(random_opening(game, 2, rng, "redraw"))
        times += play_games(game, sides, [start], np.zeros(1, int)).seconds[0]
    return {
        "agent_default_move_s_mean": float(np.mean(times)),
        "agent_default_move_s_max": max(times),
    }


def train_rates(
    learners: dict[str, Learner], data: SelfPlayData, seconds: float
) -> dict[str, float]:
    """Positions per second through each learner's optimiser on the self-play round's
    positions (``train_samples_per_s<suffix>``), the learners taking turns; and the ratio of
    the first to the second (``train_precision_speedup``)."""
    spent, steps = dict.fromkeys(learners, 0.0), dict.fromkeys(learners, 0)
    for learner in learners.values():
        learner.add(data)
        learner.train_steps(1)  # warm-up
    while min(spent.values()) < seconds / len(learners) or min(steps.values()) < 3:
        for name, learner in learners.items():
            start = time.perf_counter()
            learner.train_steps(1)
            spent[name] += time.perf_counter() - start
            steps[name] += 1
    batch = next(iter(learners.values())).run.train.batch_size
    rates = {f"train_samples_per_s{k}": steps[k] * batch / spent[k] for k in learners}
    first, second = rates.values()
    return {**rates, "train_precision_speedup": first / second}
