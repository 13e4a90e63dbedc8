"""Networks, evaluator and loss: shapes, masking, value range, learning, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import random_play_states

import ultimate_rl.games as games
import ultimate_rl.nn.device as device_module
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.nn import (
    Batch,
    ModelConfig,
    ModelConfigError,
    build_model,
    make_evaluator,
    masked_softmax,
    resolve_device,
    resolve_precision,
    training_loss,
    wdl_targets,
)
from ultimate_rl.nn.device import training_precision

GAMES = GAME_NAMES  # every registered game
SMALL = {"blocks": 1, "channels": 8, "value_hidden": 8, "mlp_hidden": (16,)}
WEIGHTS = {"policy": 1.0, "value": 1.0}


def batch(planes, masks, policies, values, full_search=None) -> Batch:
    """A torch batch; without ``full_search`` every sample is a policy target."""
    full = torch.ones(len(values), dtype=torch.bool) if full_search is None else full_search
    return Batch(planes, masks, {"policies": policies, "values": values, "full_search": full})


def random_positions(game, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Planes and legal masks of ``count`` non-terminal positions reached by random play."""
    states = random_play_states(game, count, np.random.default_rng(seed))
    planes = np.stack([game.encode(s) for s in states])
    return planes, np.stack([game.legal_mask(s) for s in states])


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("arch", ["resnet", "mlp"])
@pytest.mark.parametrize("value_head", ["scalar", "wdl"])
def test_evaluator_shapes_values_and_masking(name, arch, value_head):
    game = games.make(name)
    model = build_model(game, ModelConfig(arch=arch, value_head=value_head, **SMALL), seed=1)
    planes, masks = random_positions(game, 12, seed=2)
    # Large weights push the value head into saturation, where a missing squash would show.
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20.0)
    logits, values = make_evaluator(model, "cpu")(planes, masks)
    assert logits.shape == (12, game.num_actions) and logits.dtype == np.float32
    assert values.shape == (12,) and values.dtype == np.float32
    assert np.all(np.abs(values) <= 1.0) and np.all(np.isfinite(values))
    probs = torch.softmax(torch.from_numpy(logits), dim=-1).numpy()
    assert np.all(probs[~masks] == 0.0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("arch", ["resnet", "mlp"])
def test_the_inference_copy_folds_batch_norm_and_gives_the_same_outputs(arch):
    game = games.make("uttt")
    model = build_model(game, ModelConfig(arch=arch, value_head="wdl", **SMALL), seed=3)
    with torch.no_grad():  # batch-norm statistics and affine terms far from their initial 0/1
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-1.0, 1.0)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
    model.train()
    fused = model.for_inference()
    assert model.training  # the original is left as it was
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in fused.modules())
    assert any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules()) == (arch == "resnet")
    planes = torch.from_numpy(random_positions(game, 16, seed=4)[0])
    with torch.inference_mode():
        expected, got = model.eval()(planes), fused(planes)
    assert got.keys() == expected.keys() == {"policy", "value"}
    for name, e in expected.items():
        torch.testing.assert_close(got[name], e, rtol=1e-4, atol=1e-5)


def test_masked_softmax_zero_on_illegal_and_no_nan_without_legal_moves():
    logits = torch.randn(3, 9) * 50
    masks = torch.ones(3, 9, dtype=torch.bool)
    masks[0, ::2] = False
    masks[2] = False  # a terminal position: nothing legal
    probs = masked_softmax(logits, masks)
    assert torch.all(probs[~masks] == 0)
    assert torch.allclose(probs[:2].sum(dim=1), torch.ones(2))
    assert not torch.isnan(probs).any()


def test_evaluator_chunks_match_one_batch_and_reject_bad_shapes():
    game = games.make("tictactoe")
    model = build_model(game, ModelConfig(**SMALL), seed=0)
    planes, masks = random_positions(game, 10, seed=3)
    whole = make_evaluator(model, "cpu")(planes, masks)
    chunked = make_evaluator(model, "cpu", max_batch=3)(planes, masks)
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    evaluate = make_evaluator(model, "cpu")
    with pytest.raises(ValueError, match="planes of shape"):
        evaluate(planes[:, :, :2], masks)
    with pytest.raises(ValueError, match="masks of shape"):
        evaluate(planes, masks[:, :5])


def test_evaluator_runs_a_model_left_in_train_mode_deterministically():
    game = games.make("tictactoe")
    model = build_model(game, ModelConfig(**SMALL), seed=0)
    planes, masks = random_positions(game, 4, seed=1)
    evaluate = make_evaluator(model, "cpu")
    first = evaluate(planes, masks)
    model.train()  # a trainer sharing the model switches it back and forth
    second = evaluate(planes[:1], masks[:1])  # batch of one: BatchNorm in train mode would fail
    np.testing.assert_allclose(first[0][:1], second[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("value_head", ["scalar", "wdl"])
@pytest.mark.parametrize("arch", ["resnet", "mlp"])
def test_loss_decreases_when_overfitting_a_tiny_batch(arch, value_head):
    game = games.make("tictactoe")
    model = build_model(game, ModelConfig(arch=arch, value_head=value_head, **SMALL), seed=0)
    planes_np, masks_np = random_positions(game, 16, seed=4)
    rng = np.random.default_rng(5)
    targets = rng.random(masks_np.shape).astype(np.float32) * masks_np
    targets /= targets.sum(axis=1, keepdims=True)
    planes, masks = torch.from_numpy(planes_np), torch.from_numpy(masks_np)
    policies = torch.from_numpy(targets)
    values = torch.from_numpy(rng.choice([-1.0, 0.0, 1.0], size=16).astype(np.float32))
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    history = []
    for _ in range(60):
        loss, terms = training_loss(model, batch(planes, masks, policies, values), WEIGHTS)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        history.append(terms)
    assert set(history[0]) == {
        "loss/policy",
        "loss/value",
        "loss/total",
        "train/policy_entropy",
        "train/value_accuracy",
    }
    assert history[-1]["loss/total"] < 0.7 * history[0]["loss/total"]
    assert history[-1]["loss/value"] < history[0]["loss/value"]
    assert history[-1]["loss/policy"] < history[0]["loss/policy"]


def test_policy_loss_ignores_samples_without_full_search():
    game = games.make("tictactoe")
    model = build_model(game, ModelConfig(arch="mlp", **SMALL), seed=0)
    planes_np, masks_np = random_positions(game, 6, seed=6)
    planes, masks = torch.from_numpy(planes_np), torch.from_numpy(masks_np)
    uniform = masks.float() / masks.float().sum(dim=1, keepdim=True)
    values = torch.zeros(6)
    full = torch.tensor([True, True, True, False, False, False])
    garbage = uniform.clone()
    garbage[3:] = torch.flip(garbage[3:], dims=[1]) * 5.0
    model.eval()
    _, with_uniform = training_loss(model, batch(planes, masks, uniform, values, full), WEIGHTS)
    _, with_garbage = training_loss(model, batch(planes, masks, garbage, values, full), WEIGHTS)
    subset_batch = batch(planes[:3], masks[:3], uniform[:3], values[:3])
    _, subset = training_loss(model, subset_batch, WEIGHTS)
    assert with_uniform["loss/policy"] == pytest.approx(with_garbage["loss/policy"])
    assert with_uniform["loss/policy"] == pytest.approx(subset["loss/policy"])


def test_wdl_targets_are_distributions_with_the_target_expectation():
    values = torch.tensor([-1.0, -0.25, 0.0, 0.6, 1.0])
    wdl = wdl_targets(values)
    assert torch.all(wdl >= 0)
    assert torch.allclose(wdl.sum(dim=1), torch.ones(5))
    assert torch.allclose(wdl[:, 0] - wdl[:, 2], values)


def test_seeded_init_is_reproducible_and_leaves_global_rng_alone():
    game = games.make("numerical_ttt")
    config = ModelConfig(**SMALL)
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    a = build_model(game, config, seed=7).state_dict()
    assert torch.equal(torch.rand(1), expected_next)
    b = build_model(game, config, seed=7).state_dict()
    c = build_model(game, config, seed=8).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a if a[k].is_floating_point())


def test_config_errors_name_the_problem():
    with pytest.raises(ModelConfigError, match=r"9x9 boards.*3x3"):
        build_model(games.make("tictactoe"), ModelConfig(board_size=9))
    build_model(games.make("uttt"), ModelConfig(board_size=9, **SMALL))  # fits
    with pytest.raises(ModelConfigError, match="unknown model arch 'transformer'"):
        ModelConfig(arch="transformer")
    with pytest.raises(ModelConfigError, match="unknown value_head"):
        ModelConfig(value_head="categorical")
    with pytest.raises(ModelConfigError, match=r"unknown model config key\(s\) \['chanels'\]"):
        ModelConfig.from_dict({"chanels": 3})
    with pytest.raises(ModelConfigError, match="channels must be a positive integer"):
        ModelConfig(channels=0)
    config = ModelConfig(arch="mlp", mlp_hidden=[32, 16])
    assert ModelConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("amx", [False, True])
def test_training_precision_is_bf16_on_cpus_with_amx_only(monkeypatch, amx: bool):
    monkeypatch.setattr(device_module, "cpu_has_amx", lambda: amx)
    cpu = torch.device("cpu")
    assert training_precision("auto", cpu) == (torch.bfloat16 if amx else None)
    assert training_precision("fp32", cpu) is None
    assert training_precision("bf16", cpu) == torch.bfloat16


def test_device_and_precision_resolution():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="unknown device 'gpu0'"):
        resolve_device("gpu0")
    cpu = torch.device("cpu")
    assert resolve_precision("auto", cpu) is None
    assert resolve_precision("fp32", cpu) is None
    assert resolve_precision("bf16", cpu) == torch.bfloat16
    with pytest.raises(ValueError, match="CUDA only"):
        resolve_precision("fp16", cpu)
    with pytest.raises(ValueError, match="unknown precision"):
        resolve_precision("fp8", cpu)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            resolve_device("cuda")
