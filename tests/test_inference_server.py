"""``selfplay.inference_server=true``: one batching server process evaluates for every worker
process (``ultimate_rl.selfplay.inference_server``)."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch.multiprocessing as mp
from test_selfplay_faults import GAME_SPEC, kill_worker_0_when_its_job_is_sent, make_pool
from test_train_learns import FIXED_SET, RawPolicy, assert_never_loses, optimal_rate, run_preset
from test_train_loop import tiny

from ultimate_rl.games import layout, make, sample_positions
from ultimate_rl.games.positions import random_opening
from ultimate_rl.nn import build_model, make_evaluator
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.actor import ActorSpec, export_weights
from ultimate_rl.selfplay.inference_server import InferenceClient, InferenceServer, _Server
from ultimate_rl.selfplay.schema import SelfPlaySettings
from ultimate_rl.train import train

NETS = {
    "tictactoe": {"arch": "mlp", "mlp_hidden": [16]},
    "uttt": {"arch": "resnet", "blocks": 1, "channels": 8, "policy_channels": 2},
}


def random_positions(game, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Planes and legal masks of ``count`` random positions (0-8 random plies in)."""
    rng = np.random.default_rng(seed)
    states = [
        game.apply_sequence(random_opening(game, int(rng.integers(9)), rng, "stop"))
        for _ in range(count)
    ]
    return np.stack([game.encode(s) for s in states]), np.stack(
        [game.legal_mask(s) for s in states]
    )


@pytest.mark.parametrize("name", ["tictactoe", "uttt"])
def test_server_outputs_equal_a_local_evaluators_for_concurrent_clients(name: str):
    game = make(name)
    config = ModelConfig.from_dict(NETS[name])
    model = build_model(game, config, seed=3)
    local = make_evaluator(model, "cpu")
    spec = ActorSpec(
        {"name": name, "options": {}}, config.to_dict(), SearchConfig(), SelfPlaySettings()
    )
    server = InferenceServer(spec, mp.get_context("spawn"))
    server.load(export_weights(model), 0)
    sizes = [1, 7, 33, 64]  # four clients, each its own batch size, all at once
    results: dict[int, list] = {}

    def client(index: int) -> None:
        evaluate = InferenceClient(server.address, model.observation_shape, game.num_actions)
        results[index] = []
        for round_ in range(5):
            planes, masks = random_positions(game, sizes[index], seed=100 * index + round_)
            results[index].append((planes, masks, *evaluate(planes, masks)))
        evaluate.close()

    try:
        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(sizes))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        server.close()
    assert sorted(results) == list(range(len(sizes))) and all(len(r) == 5 for r in results.values())
    for parts in results.values():
        for planes, masks, logits, values in parts:
            expected_logits, expected_values = local(planes, masks)
            assert logits.shape == expected_logits.shape and values.shape == expected_values.shape
            np.testing.assert_allclose(logits, expected_logits, atol=1e-5, rtol=0)
            np.testing.assert_allclose(values, expected_values, atol=1e-5, rtol=0)


def test_requests_that_are_ready_together_share_one_forward_pass(tmp_path: Path):
    """The server loop in this process: four clients' requests, sent before it looks, are
    answered by ONE evaluator call, each client getting its own rows."""
    game, config = make("tictactoe"), ModelConfig.from_dict(NETS["tictactoe"])
    spec = ActorSpec(GAME_SPEC, config.to_dict(), SearchConfig(), SelfPlaySettings())
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "socket"))
    listener.listen(8)
    listener.setblocking(False)
    control, learner = mp.Pipe()
    server = _Server(spec, listener, control)
    calls = []
    evaluate = server.evaluate
    server.evaluate = lambda planes, masks: calls.append(len(planes)) or evaluate(planes, masks)
    local = make_evaluator(server.model, "cpu")
    clients = [InferenceClient(str(tmp_path / "socket"), (3, 3, 3), 9) for _ in range(4)]
    requests = [random_positions(game, n, seed=n) for n in (1, 2, 3, 5)]
    for client, (planes, _) in zip(clients, requests, strict=True):
        client.conn.send_bytes(planes)
    thread = threading.Thread(target=server.serve)
    thread.start()
    try:
        for client, (planes, masks) in zip(clients, requests, strict=True):
            reply = np.frombuffer(client.conn.recv_bytes(), np.float32).reshape(len(planes), 10)
            logits, values = local(planes, masks)
            np.testing.assert_allclose(reply[:, 9], values, atol=1e-5)
            np.testing.assert_allclose(reply[:, :9][masks], logits[masks], atol=1e-5)
    finally:
        learner.send(None)
        thread.join(timeout=30)
    assert calls == [11]


def test_a_pool_with_the_server_plays_legal_rounds_that_reproduce():
    game = make("tictactoe")
    pool = make_pool(workers=2, inference_server=True)
    try:
        first = pool.play(24, seed=5)
        again = pool.play(24, seed=5)
    finally:
        pool.close()
    plain = make_pool(workers=2)  # per-actor evaluators: the same games
    try:
        reference = plain.play(24, seed=5)
    finally:
        plain.close()
    assert first.stats.games == 24 and len(first.states) >= 24 * 5  # a game has >= 5 moves
    for state, policy in zip(first.states, first.policies, strict=True):
        assert state[layout.STATUS] == layout.ONGOING  # recorded positions are mid-game
        legal = game.legal_mask(state)
        assert policy.sum() == pytest.approx(1.0) and not policy[~legal].any()
    assert set(np.unique(first.values)) <= {-1.0, 0.0, 1.0}
    for name in ("states", "policies", "values", "full_search"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
        np.testing.assert_array_equal(getattr(reference, name), getattr(first, name))


def test_one_worker_with_the_server_plays_in_a_worker_process_not_in_process():
    pool = make_pool(workers=1, inference_server=True)
    try:
        assert pool.backend is not None and pool.backend.server.alive()
        assert pool.play(6, seed=0).stats.games == 6
    finally:
        pool.close()


def test_a_killed_worker_is_replaced_and_reconnects_to_the_server():
    pool = make_pool(workers=2, inference_server=True)
    try:
        expected = pool.play(40, seed=7)
        kill_worker_0_when_its_job_is_sent(pool.backend)
        again = pool.play(40, seed=7)
        assert pool.backend.replaced == 1
    finally:
        pool.close()
    for name in ("states", "policies", "values", "full_search"):
        np.testing.assert_array_equal(getattr(again, name), getattr(expected, name))


def test_a_dead_server_raises_instead_of_hanging_and_close_stops_it():
    pool = make_pool(workers=2, inference_server=True)
    server = pool.backend.server
    try:
        pool.play(8, seed=1)
        os.kill(server.process.pid, signal.SIGKILL)
        start = time.perf_counter()
        with pytest.raises(RuntimeError, match=r"inference server .* died"):
            pool.play(40, seed=2)
        assert time.perf_counter() - start < 30
    finally:
        pool.close()
    assert not server.alive()
    pool = make_pool(workers=2, inference_server=True)
    server = pool.backend.server
    pool.close()
    assert not server.alive() and not Path(server.address).exists()


def test_a_server_that_fails_says_why():
    config = ModelConfig.from_dict(NETS["tictactoe"])
    spec = ActorSpec(GAME_SPEC, config.to_dict(), SearchConfig(), SelfPlaySettings())
    server = InferenceServer(spec, mp.get_context("spawn"))
    try:
        client = InferenceClient(server.address, (3, 3, 3), 9)
        client.conn.send_bytes(b"not planes")  # 10 bytes: no whole float32 array of planes
        server.process.join(timeout=30)
        weights = export_weights(build_model(make("tictactoe"), config))
        with pytest.raises(RuntimeError, match=r"inference server .* died(.|\n)*ValueError"):
            server.load(weights, 0)
    finally:
        server.close()
    assert not server.alive()


def test_the_ray_backend_refuses_the_server_by_name():
    with pytest.raises(
        ValueError, match=r"inference_server=true needs selfplay\.backend=processes"
    ):
        SelfPlaySettings(workers=2, backend="ray", inference_server=True)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_training_through_the_server(tmp_path: Path, mode: str):
    overrides = ["selfplay.workers=2", "selfplay.inference_server=true", f"train.mode={mode}"]
    summary = train(tiny("train.iterations=2", "eval.every=0", *overrides), tmp_path)
    assert summary["iterations"] == 2 and summary["games"] >= 2 * 8


@pytest.mark.slow
def test_tictactoe_quick_reaches_perfect_play_through_the_server(tmp_path: Path):
    overrides = ["selfplay.workers=2", "selfplay.inference_server=true"]
    run_preset("tictactoe_quick", tmp_path, 900, *overrides)
    game = make("tictactoe")
    assert_never_loses(tmp_path, game)
    policy = RawPolicy(tmp_path, game)
    assert optimal_rate(game, policy, sample_positions(game, 200, seed=FIXED_SET)) >= 0.98
