"""Self-play, inference and training throughput for the ``uttt_cpu`` preset's network and search.

Figures:
- ``selfplay_positions_per_s``: moves played per second by one worker playing
  ``selfplay.parallel_games`` games at once to the end, on the default inference path
  (``make_evaluator(backend="auto")``, whose choice is ``selfplay_inference_path``);
  ``selfplay_positions_per_s_torch``: the same worker and settings on plain torch float32,
  measured in the same run; ``selfplay_speedup``: their ratio.
- ``selfplay_nn_time_fraction``: the share of the default path's wall time spent inside the
  network's ``evaluate`` (the rest is search and engine overhead).
- ``nn_positions_per_s_<path>_b<batch>``: the shipped network's ``evaluate`` alone, per
  inference path, at batch 1, 64 and 256.
- ``numerics_<path>_top_move_agreement`` / ``_max_value_difference``: each reduced-precision
  path against float32 on ``NUMERICS_POSITIONS`` positions of real games (the UCT-10,000 vs
  UCT-100,000 games of the shipped agent's evaluation), the shipped network.
- ``onnx_refresh_ms`` / ``int8_refresh_ms``: what an onnxruntime evaluator pays to pick up new
  weights (one export; for int8 also the quantization and its numerics check).
- ``agent_simulations_per_s``: the shipped agent at its file's defaults (batched leaves, the
  chosen path ``agent_inference_path``) over fixed positions; ``_baseline``: the same network and
  simulations the old way (one leaf per call, onnxruntime float32, no early stop);
  ``agent_speedup``: their ratio.
- ``agent_default_move_s_mean`` / ``_max``: the shipped agent at the search its file stores (what
  a player meets: "at most one second per move" reads the max), over whole games against
  itself (``agent_games`` in ``configs/bench.yaml``: 2, or 20 for issue 28's slowest move).
- ``train_samples_per_s``: positions per second through the optimiser, augmentation included,
  at the preset's ``train.precision`` (auto: bf16 on CUDA and on CPUs with AMX);
  ``train_samples_per_s_fp32``: the same learner in float32, measured alternately in the same
  run; ``train_precision_speedup``: their ratio (1.0 where auto means float32).

One thread, the preset's own settings, after a warm-up that compiles kernels. Backends are
measured alternately (self-play: two rounds each, torch-default-default-torch) so that other
load on the machine affects them alike.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ultimate_rl.agents.match import one_by_one, play_games
from ultimate_rl.agents.network import NetworkAgent
from ultimate_rl.export.bundle import read_bundle
from ultimate_rl.games import Game, random_opening, sample_positions
from ultimate_rl.loading import load_agent
from ultimate_rl.nn import PATHS, OnnxEvaluator, OnnxInt8Evaluator, make_evaluator, probe_positions
from ultimate_rl.nn.evaluator import float32_outputs
from ultimate_rl.nn.models import PolicyValueNet
from ultimate_rl.nn.numerics import compare
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlayWorker
from ultimate_rl.train.config import check_config
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config

PRESET = "uttt_cpu"
NN_BATCHES = (1, 64, 256)
ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "checkpoints" / "uttt_agent.urla"
REAL_GAMES = ROOT / "checkpoints" / "uttt_agent_evaluation" / "games"
REAL_GAMES_FILE = "uct-10000__vs__uct-100000.jsonl"
NUMERICS_POSITIONS = 1000
BASELINE_SIMULATIONS = 1600  # the shipped agent's search before batched leaves and time budgets
AGENT_POSITIONS = 6
AGENT_GAMES = 2  # bench.yaml's agent_games: whole games timed; issue 28's figure reads 20


def run(cfg: Any) -> dict[str, float | str]:
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
    batch = checked.selfplay.evaluation_batch(checked.search)
    evaluators = {
        "default": make_evaluator(model, "cpu", game=game, batch_size=batch),
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
    network = read_bundle(AGENT).build_model("cpu").for_inference()
    figures = {
        "selfplay_positions_per_s": moves / spent,
        "selfplay_positions_per_s_torch": torch_rate,
        "selfplay_speedup": moves / spent / torch_rate,
        "selfplay_inference_path": evaluators["default"].backend,
        "selfplay_nn_time_fraction": nn_spent / spent,
        "selfplay_simulations_per_s": simulations / spent,
        **nn_rates(network, game, seconds),
        **path_numerics(network, game),
        **refresh_ms(network, game),
        **agent_simulation_rates(game),
        **agent_default_move_seconds(game, int(cfg.get("agent_games", AGENT_GAMES))),
    }
    fp32 = Learner(check_config(compose_train_config([*overrides, "train.precision=fp32"])), cpu)
    figures.update(train_rates({"": learner, "_fp32": fp32}, data, seconds))
    return figures


def nn_rates(model: PolicyValueNet, game: Game, seconds: float) -> dict[str, float]:
    """Positions per second through each path's ``evaluate`` at each of ``NN_BATCHES``, the
    paths taking turns call by call."""
    probe = probe_positions(game)
    evaluators = {p: make_evaluator(model, "cpu", backend=p, game=game) for p in PATHS}
    figures = {}
    for batch in NN_BATCHES:
        rows = np.arange(batch) % len(probe.planes)
        planes, masks = probe.planes[rows], probe.masks[rows]
        for evaluate in evaluators.values():
            evaluate(planes, masks)  # warm-up (and the onnxruntime sessions)
        spent, calls = dict.fromkeys(PATHS, 0.0), dict.fromkeys(PATHS, 0)
        while min(spent.values()) < seconds / len(NN_BATCHES):
            for path, evaluate in evaluators.items():
                start = time.perf_counter()
                evaluate(planes, masks)
                spent[path] += time.perf_counter() - start
                calls[path] += 1
        figures.update(
            {f"nn_positions_per_s_{p}_b{batch}": calls[p] * batch / spent[p] for p in PATHS}
        )
    return figures


def real_positions(game: Game, count: int) -> list[np.ndarray]:
    """Up to ``count`` positions of real games: every ply of the stored UCT-10,000 vs
    UCT-100,000 games (their openings included), game after game."""
    positions = []
    with (REAL_GAMES / REAL_GAMES_FILE).open() as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("type") != "game":
                continue
            state = game.initial_state()
            for action in [*record["opening"], *record["moves"]]:
                if len(positions) == count or game.is_terminal(state):
                    break
                positions.append(state)
                state = game.apply(state, action)
            if len(positions) == count:
                break
    return positions


def path_numerics(model: PolicyValueNet, game: Game) -> dict[str, float]:
    """Each reduced-precision path's top-move agreement and largest value difference with
    float32 on ``NUMERICS_POSITIONS`` positions of real games."""
    states = np.stack(real_positions(game, NUMERICS_POSITIONS))
    planes = np.stack([game.encode(s) for s in states])
    masks = np.stack([game.legal_mask(s) for s in states])
    reference = float32_outputs(model, planes)
    figures = {"numerics_positions": float(len(states))}
    for path in ("torch_bf16", "onnxruntime_int8"):
        got = make_evaluator(model, "cpu", backend=path, game=game)(planes, masks)
        check = compare(reference, got, masks)
        figures[f"numerics_{path}_top_move_agreement"] = check.top_move_agreement
        figures[f"numerics_{path}_max_value_difference"] = check.max_value_difference
    return figures


def refresh_ms(model: PolicyValueNet, game: Game, repeats: int = 5) -> dict[str, float]:
    """Median milliseconds an onnxruntime evaluator (float32, int8) takes to load new weights."""
    evaluators = {
        "onnx_refresh_ms": OnnxEvaluator(model, "cpu"),
        "int8_refresh_ms": OnnxInt8Evaluator(model, "cpu", probe=probe_positions(game)),
    }
    figures = {}
    for name, evaluate in evaluators.items():
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            evaluate.refresh()
            times.append(time.perf_counter() - start)
        figures[name] = 1000 * statistics.median(times)
    return figures


def agent_simulation_rates(game: Game) -> dict[str, float | str]:
    """Simulations per second of the shipped agent at its defaults and of the baseline (one leaf
    per call on onnxruntime float32, ``BASELINE_SIMULATIONS``, no early stop), over the same
    fixed positions (unrelated, so no tree is reused), taking turns position by position."""
    baseline = {
        "num_simulations": BASELINE_SIMULATIONS,
        "leaves_per_tree": 1,
        "inference": "onnxruntime",
        "time_per_move": None,
        "stop_early": False,
    }
    agents = {
        "agent_simulations_per_s": load_agent(AGENT, seed=0),
        "agent_simulations_per_s_baseline": load_agent(AGENT, seed=0, **baseline),
    }
    positions = [game.initial_state(), *sample_positions(game, AGENT_POSITIONS - 1, 7)]
    rates: dict[str, float | str] = dict(simulation_rates(game, agents, positions))
    rates["agent_speedup"] = (
        rates["agent_simulations_per_s"] / rates["agent_simulations_per_s_baseline"]
    )
    rates["agent_inference_path"] = agents["agent_simulations_per_s"].evaluate.backend
    return rates


def simulation_rates(
    game: Game, agents: dict[str, NetworkAgent], positions: list[np.ndarray]
) -> dict[str, float]:
    """Simulations per second of each agent's moves in ``positions``, the agents taking turns
    position by position so that other load on the machine affects them alike."""
    spent, simulations = dict.fromkeys(agents, 0.0), dict.fromkeys(agents, 0)
    for state in positions:
        for name, agent in agents.items():
            start = time.perf_counter()
            agent.select_action(game, state)
            spent[name] += time.perf_counter() - start
            simulations[name] += agent.last_simulations
    return {name: simulations[name] / spent[name] for name in agents}


def agent_default_move_seconds(game: Game, games: int) -> dict[str, float]:
    """Mean and slowest seconds per move of the shipped agent at its file's own defaults, over
    ``games`` games against itself from random 2-move openings, one at a time (each side
    its own agent and tree, as in a match); the agent warms up when it loads, so every move
    counts."""
    sides = (
        one_by_one(game, load_agent(AGENT, seed=0)),
        one_by_one(game, load_agent(AGENT, seed=1)),
    )
    rng = np.random.default_rng(0)
    times = []
    for _ in range(games):
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
