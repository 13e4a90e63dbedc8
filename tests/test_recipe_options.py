"""Training-recipe options, each off by default: the value target mixed with the root value, the
opponent-reply and soft-policy auxiliary heads, global pooling in the ResNet."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ultimate_rl.games import layout, make
from ultimate_rl.nn import Batch, ModelConfig, build_model
from ultimate_rl.nn.losses import losses_for, soft_policy_loss, training_loss
from ultimate_rl.search import SearchConfig
from ultimate_rl.selfplay.augment import apply_symmetries
from ultimate_rl.selfplay.schema import PlayoutCapSettings, SelfPlaySettings
from ultimate_rl.selfplay.targets import OPTIONAL_TARGETS, TARGETS
from ultimate_rl.selfplay.worker import SelfPlayWorker
from ultimate_rl.train.config import check_config
from ultimate_rl.train.learner import Learner, mix_value_targets
from ultimate_rl.train.run import compose_train_config

AUX = ("opponent_policy", "soft_policy")


def uniform(planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(masks.shape, np.float32), np.full(len(masks), 0.25, np.float32)


def test_selfplay_records_root_values_and_the_opponents_reply():
    game = make("tictactoe")
    settings = SelfPlaySettings(
        parallel_games=4, playout_cap=PlayoutCapSettings(fraction_full=0.6, fast_simulations=2)
    )
    worker = SelfPlayWorker(game, SearchConfig(num_simulations=8), settings)
    data = worker.play(uniform, 10, np.random.default_rng(0))
    # a constant evaluation of 0.25 for the mover keeps root values inside (-1, 1), not 0
    assert np.all(np.abs(data.root_values) < 1) and np.any(data.root_values != 0)
    moves = data.states[:, layout.MOVES]
    for j in range(len(moves)):  # a game's positions are recorded in order, game after game
        has_next = j + 1 < len(moves) and moves[j + 1] == moves[j] + 1
        expected = data.policies[j + 1] if has_next and data.full_search[j + 1] else 0.0
        np.testing.assert_array_equal(data.opponent_policies[j], expected)
    assert 0 < np.count_nonzero(data.opponent_policies.sum(axis=1)) < len(moves)


def small_run(*extra: str):
    base = ["game=tictactoe", "model=mlp", "model.mlp_hidden=[16]", "device=cpu"]
    return check_config(compose_train_config([*base, *extra]))


def test_default_recipe_stores_and_trains_what_it_did():
    """Options off: no extra replay arrays (checkpoints as before), no extra loss terms."""
    learner = Learner(small_run(), torch.device("cpu"))
    assert learner.replay.specs == TARGETS
    assert [loss.name for loss in learner.losses] == ["policy", "value"]
    assert set(learner.model(torch.zeros(1, 3, 3, 3))) == {"policy", "value"}


def test_value_target_mixes_result_and_root_value():
    learner = Learner(small_run("optim.value_target_q_weight=0.25"), torch.device("cpu"))
    assert "root_values" in learner.replay.targets
    batch = Batch(None, None, {"values": np.array([1.0, -1.0]), "root_values": np.array([-1, 0.5])})
    np.testing.assert_allclose(mix_value_targets(batch, 0.25).targets["values"], [0.5, -0.625])


def test_aux_heads_are_outputs_losses_and_stored_targets():
    run = small_run(
        "model.aux_heads=[opponent_policy,soft_policy]",
        "optim.loss_weights.opponent_policy=0.15",
        "optim.loss_weights.soft_policy=1",
    )
    learner = Learner(run, torch.device("cpu"))
    assert learner.replay.specs == (*TARGETS, OPTIONAL_TARGETS["opponent_policies"])
    outputs = learner.model(torch.zeros(2, 3, 3, 3))
    assert all(outputs[head].shape == (2, 9) for head in AUX)
    masks = torch.ones(2, 9, dtype=torch.bool)
    reply = torch.zeros(2, 9)
    reply[0, 4] = 1.0  # the second position has no reply (its game ended)
    targets = {
        "policies": torch.full((2, 9), 1 / 9),
        "values": torch.zeros(2),
        "full_search": torch.ones(2, dtype=torch.bool),
        "opponent_policies": reply,
    }
    batch = Batch(torch.zeros(2, 3, 3, 3), masks, targets)
    _, terms = training_loss(learner.model, batch, run.optim.loss_weights, losses_for(run.model))
    log_probs = torch.log_softmax(outputs["opponent_policy"][0].detach(), dim=-1)
    assert terms["loss/opponent_policy"] == pytest.approx(-float(log_probs[4]), rel=1e-5)
    assert {"loss/soft_policy", "loss/opponent_policy"} <= set(terms)


def test_soft_policy_target_is_the_policy_to_the_quarter_renormalised():
    model = build_model(make("tictactoe"), ModelConfig(arch="mlp", aux_heads=("soft_policy",)))
    policy = torch.tensor([[0.8, 0.2] + [0.0] * 7])
    batch = Batch(
        torch.zeros(1, 3, 3, 3),
        torch.ones(1, 9, dtype=torch.bool),
        {"policies": policy, "full_search": torch.ones(1, dtype=torch.bool)},
    )
    probs = torch.tensor([[0.5, 0.25] + [0.25 / 7] * 7])
    logits = probs.log()
    soft = torch.tensor([0.8**0.25, 0.2**0.25])
    soft = soft / soft.sum()
    loss, _ = soft_policy_loss(model, {"soft_policy": logits}, batch)
    expected = -(soft * probs[0, :2].log()).sum()
    assert float(loss) == pytest.approx(float(expected), rel=1e-5)
    batch.targets["full_search"][0] = False  # a cheap search is no policy target
    assert float(soft_policy_loss(model, {"soft_policy": logits}, batch)[0]) == 0.0


@pytest.mark.parametrize("name", ["numerical_ttt", "uttt"])
def test_the_reply_target_moves_with_the_policy_under_every_symmetry(name: str):
    """numerical tic-tac-toe's symmetries also swap numbers (n -> 10 - n), which keeps each
    player's numbers: the opponent's reply permutes exactly like the mover's policy."""
    game = make(name)
    rng = np.random.default_rng(0)
    n = 4 * len(game.symmetries)
    policy = rng.random((n, game.num_actions)).astype(np.float32)
    batch = Batch(
        np.zeros((n, *game.observation_shape), np.float32),
        np.ones((n, game.num_actions), bool),
        {"policies": policy, "opponent_policies": policy.copy(), "values": np.zeros(n)},
    )
    targets = (*TARGETS, OPTIONAL_TARGETS["opponent_policies"])
    choice = np.arange(n) % len(game.symmetries)
    moved = apply_symmetries(batch, game.symmetries, choice, targets)
    np.testing.assert_array_equal(moved.targets["opponent_policies"], moved.targets["policies"])
    assert not np.array_equal(moved.targets["policies"], policy)


def test_global_pooling_lets_one_block_see_the_whole_board():
    """Two 3x3 convolutions reach 2 cells; with global pooling a far corner changes the output."""
    game = make("uttt")
    outputs = {}
    for pooling in (False, True):
        config = ModelConfig(arch="resnet", blocks=1, channels=8, global_pooling=pooling)
        model = build_model(game, config, seed=0).eval()
        planes = torch.zeros(2, *game.observation_shape)
        planes[1, :, 8, 8] = 1.0  # the far corner
        with torch.no_grad():
            features = model.tower(model.stem(planes))
        outputs[pooling] = features[:, :, 0, 0]
    torch.testing.assert_close(outputs[False][0], outputs[False][1])
    assert not torch.allclose(outputs[True][0], outputs[True][1])


@pytest.mark.parametrize("name", ["uttt", "tictactoe"])
def test_global_pooling_keeps_the_outputs_shapes_and_the_towers_symmetry(name: str):
    """Pooling adds a board-wide bias, the same for every cell: the heads' shapes stay, and a
    tower whose 3x3 kernels are symmetric turns with the board, pooled or not (means and maxima
    of a turned board are the same)."""
    game = make(name)

    def turned(x: torch.Tensor) -> list[torch.Tensor]:  # the game's board symmetries
        return [torch.from_numpy(s.grid(x.detach().numpy()).copy()) for s in game.symmetries]

    planes = torch.rand(3, *game.observation_shape)
    shapes = {}
    for pooling in (False, True):
        config = ModelConfig(arch="resnet", blocks=2, channels=8, global_pooling=pooling)
        model = build_model(game, config, seed=1).eval()
        with torch.no_grad():
            for conv in (m for m in model.modules() if isinstance(m, torch.nn.Conv2d)):
                conv.weight.copy_(torch.stack(turned(conv.weight)).mean(dim=0))
            shapes[pooling] = {k: v.shape for k, v in model(planes).items()}
            features = model.tower(model.stem(planes))
            for turned_planes, turned_features in zip(
                turned(planes), turned(features), strict=True
            ):
                got = model.tower(model.stem(turned_planes))
                torch.testing.assert_close(got, turned_features, atol=1e-5, rtol=1e-5)
    assert shapes[True] == shapes[False]


def test_init_from_starts_a_run_from_a_checkpoints_weights(tmp_path):
    from ultimate_rl.nn.checkpoint import save_checkpoint
    from ultimate_rl.train.checkpoints import RunCheckpoints
    from ultimate_rl.train.config import ConfigError

    source = Learner(small_run("seed=5"), torch.device("cpu")).model
    path = tmp_path / "warm.pt"
    save_checkpoint(path, model=source, game_name="tictactoe", game_options={}, step=7)
    run = small_run(
        f"train.init_from={path}",
        "model.aux_heads=[soft_policy]",  # a head the checkpoint lacks starts fresh
        "optim.loss_weights.soft_policy=1",
    )
    learner = Learner(run, torch.device("cpu"))
    RunCheckpoints(tmp_path / "run", run, {}).restore(learner)  # a new run: init_from applies
    for key, value in source.state_dict().items():
        torch.testing.assert_close(learner.model.state_dict()[key], value)
    assert learner.progress.step == 0 and not learner.optimizer.state
    other = Learner(small_run("model.mlp_hidden=[8]"), torch.device("cpu"))
    with pytest.raises(ConfigError, match=r"train\.init_from=.*does not fit this run's model"):
        other.init_weights(str(path))
