"""Inference backends: torch and onnxruntime agree, and new weights reach the next self-play round.

An onnxruntime session is a snapshot of the weights, unlike the torch evaluator that holds the
live model; these tests check that the snapshot is renewed whenever the weights change, in the
learner's process and in worker processes, and that seeded self-play still reproduces.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ultimate_rl.games as games
from ultimate_rl.nn import (
    MASKED_LOGIT,
    ModelConfig,
    NetworkEvaluator,
    OnnxEvaluator,
    build_model,
    make_evaluator,
)
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.parallel import SelfPlayPool
from ultimate_rl.selfplay.worker import SelfPlayData, SelfPlaySettings

GAMES = ["uttt", "numerical_ttt", "tictactoe"]
SMALL = {"blocks": 2, "channels": 8, "value_hidden": 8, "mlp_hidden": (16, 16)}


def small_model(
    game_name: str, arch: str = "mlp", value_head: str = "wdl", seed: int = 0, **options
):
    """A small network whose batch-norm statistics are away from their defaults (so folding them
    into the convolutions for the ONNX graph is exercised)."""
    game = games.make(game_name)
    config = ModelConfig(arch=arch, value_head=value_head, **SMALL, **options)
    model = build_model(game, config, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5, generator=generator)
                module.running_var.uniform_(0.5, 2.0, generator=generator)
    return game, model


def random_inputs(game, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    planes = rng.random((count, *game.observation_shape), dtype=np.float32)
    return planes, rng.random((count, game.num_actions)) < 0.7


# the recipe options that change the network: global pooling (resnet), auxiliary heads
OPTIONS = {
    "resnet": {},
    "mlp": {},
    "resnet_pooled": {"arch": "resnet", "global_pooling": True},
    "mlp_aux": {"arch": "mlp", "aux_heads": ("opponent_policy", "soft_policy")},
}


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("arch", list(OPTIONS))
@pytest.mark.parametrize("value_head", ["scalar", "wdl"])
def test_backends_give_the_same_logits_and_values(name: str, arch: str, value_head: str):
    game, model = small_model(name, value_head=value_head, **(OPTIONS[arch] or {"arch": arch}))
    planes, masks = random_inputs(game, 33, seed=1)
    expected = make_evaluator(model, "cpu", backend="torch")(planes, masks)
    got = make_evaluator(model, "cpu", backend="onnxruntime")(planes, masks)
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-4)
    assert np.all(got[0][~masks] == np.float32(MASKED_LOGIT))


@pytest.mark.parametrize("backend", ["torch", "onnxruntime"])
def test_chunked_and_empty_batches(backend: str):
    game, model = small_model("uttt", "resnet")
    planes, masks = random_inputs(game, 10, seed=4)
    whole = make_evaluator(model, "cpu", backend=backend)(planes, masks)
    chunked = make_evaluator(model, "cpu", backend=backend, max_batch=3)(planes, masks)
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    logits, values = make_evaluator(model, "cpu", backend=backend)(planes[:0], masks[:0])
    assert logits.shape == (0, game.num_actions) and values.shape == (0,)


def test_auto_takes_onnxruntime_on_the_cpu_and_unknown_backends_are_refused():
    _, model = small_model("tictactoe")
    assert isinstance(make_evaluator(model, "cpu"), OnnxEvaluator)
    torch_evaluator = make_evaluator(model, "cpu", backend="torch")
    assert type(torch_evaluator) is NetworkEvaluator and torch_evaluator.backend == "torch"
    with pytest.raises(ValueError, match="unknown inference backend 'tensorrt'"):
        make_evaluator(model, "cpu", backend="tensorrt")
    with pytest.raises(ValueError, match=r"selfplay\.inference must be one of"):
        SelfPlaySettings(inference="onnx")


def test_an_optimiser_step_or_loaded_weights_are_seen_by_the_next_call():
    game, model = small_model("uttt", "resnet")
    planes, masks = random_inputs(game, 8, seed=2)
    evaluate = make_evaluator(model, "cpu", backend="onnxruntime")
    before = evaluate(planes, masks)
    model.train()  # as the trainer leaves it
    optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
    outputs = model(torch.from_numpy(planes))
    (outputs["policy"].square().mean() + outputs["value"].square().mean()).backward()
    optimiser.step()
    stepped = evaluate(planes, masks)
    assert not np.allclose(stepped[0], before[0], atol=1e-3)
    np.testing.assert_allclose(
        stepped[0], make_evaluator(model, "cpu", backend="torch")(planes, masks)[0], atol=1e-4
    )
    model.load_state_dict(small_model("uttt", "resnet", seed=5)[1].state_dict())
    loaded = evaluate(planes, masks)
    expected = make_evaluator(small_model("uttt", "resnet", seed=5)[1], "cpu")(planes, masks)
    np.testing.assert_array_equal(loaded[0], expected[0])


def assert_same_data(a: SelfPlayData, b: SelfPlayData) -> None:
    for field in ("states", "policies", "values", "full_search"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


def play_rounds(workers: int) -> list[SelfPlayData]:
    """Three rounds with one seed: the first weights, new ones, then the first ones again."""
    spec = {"name": "tictactoe", "options": {}}
    settings = SelfPlaySettings(
        workers=workers, parallel_games=4, games_per_iteration=8, inference="onnxruntime"
    )
    _, model = small_model("tictactoe", seed=0)
    weights = [model.state_dict(), small_model("tictactoe", seed=3)[1].state_dict()]
    weights[0] = {k: v.clone() for k, v in weights[0].items()}
    pool = SelfPlayPool(spec, model, SearchConfig(num_simulations=8), settings, torch.device("cpu"))
    rounds = []
    try:
        for state in (weights[0], weights[1], weights[0]):
            model.load_state_dict(state)
            rounds.append(pool.play(8, seed=11))
    finally:
        pool.close()
    return rounds


@pytest.mark.parametrize("workers", [1, 2])
def test_new_weights_reach_the_next_self_play_round(workers: int):
    first, updated, restored = play_rounds(workers)
    assert not np.array_equal(first.policies, updated.policies)
    assert_same_data(first, restored)  # the same weights and seed: the same games
