"""``train.init_from`` a smaller ResNet or MLP grows it (``nn.grow``): the bigger network starts
with the small one's outputs exactly, and every new weight learns from the first step."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import ultimate_rl
from tests.helpers import random_play_states, tiny_run_overrides
from tests.test_init_from_agent import AGENT, random_positions, uttt_run
from ultimate_rl.games import make as make_game
from ultimate_rl.nn import make_evaluator
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.grow import can_grow, extends_encoding, size_name
from ultimate_rl.selfplay.worker import SelfPlayWorker
from ultimate_rl.train import check_config
from ultimate_rl.train.checkpoints import RunCheckpoints
from ultimate_rl.train.config import ConfigError
from ultimate_rl.train.learner import Learner
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.warm_start import save_warm_start

SHIPPED = ModelConfig(blocks=3, channels=32, board_size=9)  # the shipped agent's sizes
GROWTHS = {
    "deeper": ["model.blocks=5"],
    "wider": ["model.channels=48"],
    "every size": [
        "model.blocks=4",
        "model.channels=40",
        "model.policy_channels=8",
        "model.value_channels=4",
        "model.value_hidden=96",
    ],
    "pooled": ["model.global_pooling=true"],  # KataGo's pooling bias added to every block
    "wider and pooled": ["model.channels=48", "model.global_pooling=true"],
}


@pytest.mark.parametrize("growth", GROWTHS)
def test_a_grown_network_computes_the_small_ones_outputs(tmp_path: Path, capsys, growth: str):
    run = uttt_run(f"train.init_from={AGENT}", "model=resnet_small", *GROWTHS[growth])
    learner = Learner(run, torch.device("cpu"))
    RunCheckpoints(tmp_path / "run", run, {}).restore(learner)  # a new run: init_from applies
    assert "grown from 3x32" in capsys.readouterr().out
    small = ultimate_rl.load_agent(AGENT, num_simulations=0, inference="torch").model
    planes = torch.from_numpy(random_positions(run.game, 64))
    learner.model.eval()
    with torch.no_grad():
        ours, theirs = learner.model(planes), small(planes)
    for head in ("policy", "value"):
        torch.testing.assert_close(ours[head], theirs[head], atol=1e-4, rtol=1e-4)


PLANES = {
    "threat planes": ["game.threat_planes=true"],
    "threat and strategy planes": ["game.threat_planes=true", "game.strategy_planes=true"],
    "threat planes, deeper": ["game.threat_planes=true", "model.blocks=4"],
}


@pytest.mark.parametrize("growth", PLANES)
def test_a_network_grows_into_input_planes_added_after_its_own(tmp_path, capsys, growth: str):
    """The shipped 8-plane network continues with uttt's threat planes: their stem weights
    start at zero, so it first plays as it did, then learns to read them."""
    run = uttt_run(f"train.init_from={AGENT}", "model=resnet_small", *PLANES[growth])
    learner = Learner(run, torch.device("cpu"))
    RunCheckpoints(tmp_path / "run", run, {}).restore(learner)
    planes = run.game.observation_shape[0]
    assert f"grown from 3x32, its 8 input planes to {planes}" in capsys.readouterr().out
    small = ultimate_rl.load_agent(AGENT, num_simulations=0, inference="torch").model
    positions = torch.from_numpy(random_positions(run.game, 64))
    learner.model.eval()
    with torch.no_grad():
        ours, theirs = learner.model(positions), small(positions[:, :8])
    for head in ("policy", "value"):
        torch.testing.assert_close(ours[head], theirs[head], atol=1e-4, rtol=1e-4)


def test_a_network_does_not_shrink_into_fewer_planes(tmp_path: Path):
    threats = Learner(uttt_run("model=resnet_small", *PLANES["threat planes"]), torch.device("cpu"))
    path = str(save_warm_start(threats, tmp_path / "threats.pt"))
    plain = Learner(uttt_run("model=resnet_small"), torch.device("cpu"))
    with pytest.raises(ConfigError, match=r"reads 15 input planes.*do not start with"):
        plain.init_weights(path)


def test_an_encoding_extends_another_only_by_planes_after_all_of_its_own():
    plain, threats = make_game("uttt"), make_game("uttt", threat_planes=True)
    strategy = make_game("uttt", threat_planes=True, strategy_planes=True)
    assert extends_encoding(plain, threats) and extends_encoding(threats, strategy)
    assert extends_encoding(plain, strategy)
    assert not extends_encoding(threats, plain) and not extends_encoding(plain, plain)
    assert not extends_encoding(make_game("tictactoe"), make_game("tictactoe", size=4))


def test_every_new_weight_learns_from_the_first_step():
    growth = [*GROWTHS["every size"], "model.global_pooling=true"]
    run = uttt_run(f"train.init_from={AGENT}", "model=resnet_small", *growth)
    learner = Learner(run, torch.device("cpu"))
    learner.init_weights(str(AGENT))
    assert learner.model.state_dict()["tower.0.pool_bias.weight"].abs().sum() == 0
    worker = SelfPlayWorker(run.game, run.search, run.selfplay)
    evaluate = make_evaluator(learner.model, "cpu", backend="torch")
    data = worker.play(evaluate, 2, np.random.default_rng(0))
    learner.add(data)
    before = {k: v.clone() for k, v in learner.model.state_dict().items()}
    learner.train_steps(1)
    after = learner.model.state_dict()
    zeroed = {  # each started at 0: a new unit's way into an old one, a new block's scale
        "new channels into an old one": after["tower.0.conv2.weight"][:32, 32:],
        "new head channels into the policy": after["policy_head.4.weight"][:, 4 * 81 :],
        "new hidden units into the value": after["value_head.6.weight"][:, 64:],
        "the new block's last scale": after["tower.3.bn2.weight"],
        "an old block's new pooling bias": after["tower.0.pool_bias.weight"],
    }
    for what, weights in zeroed.items():
        assert weights.abs().sum() > 0, f"{what} did not learn"
    assert torch.equal(before["tower.3.bn2.weight"], torch.zeros(40))


def test_only_a_smaller_network_of_the_same_kind_grows():
    assert can_grow(SHIPPED, replace(SHIPPED, blocks=6, channels=64))
    assert can_grow(SHIPPED, replace(SHIPPED, aux_heads=("soft_policy",), value_hidden=65))
    assert not can_grow(SHIPPED, SHIPPED)  # nothing to grow: loaded as it is
    assert not can_grow(SHIPPED, replace(SHIPPED, blocks=4, channels=16))  # narrower
    assert not can_grow(SHIPPED, replace(SHIPPED, blocks=4, value_head="scalar"))
    assert not can_grow(replace(SHIPPED, arch="mlp"), replace(SHIPPED, arch="mlp", blocks=4))
    pooled = replace(SHIPPED, global_pooling=True)  # its bias reads [means, maxima]: depth only
    assert can_grow(pooled, replace(pooled, blocks=4))
    assert not can_grow(pooled, replace(pooled, channels=48))
    assert can_grow(SHIPPED, pooled)  # a pooling bias is gained at zero
    assert not can_grow(pooled, replace(SHIPPED, blocks=4))  # nor ever dropped


def test_growing_keeps_the_small_networks_auxiliary_heads_or_says_how(tmp_path: Path):
    aux = ("model.aux_heads=[soft_policy]", "optim.loss_weights.soft_policy=1")
    small = Learner(uttt_run("model=resnet_small", *aux), torch.device("cpu"))
    path = str(save_warm_start(small, tmp_path / "small.pt"))
    without = Learner(uttt_run("model=resnet_small", "model.blocks=4"), torch.device("cpu"))
    with pytest.raises(ConfigError, match=r"set model\.aux_heads=\[soft_policy\] to keep"):
        without.init_weights(path)  # growing would drop the head: an error, as when not growing
    kept = Learner(uttt_run("model=resnet_small", "model.blocks=4", *aux), torch.device("cpu"))
    assert kept.init_weights(path) == "from 3x32"  # grown: how
    head = "aux_heads.soft_policy.0.weight"
    torch.testing.assert_close(kept.model.state_dict()[head], small.model.state_dict()[head])
    assert Learner(small.run, torch.device("cpu")).init_weights(path) is None  # same size


def test_a_wider_mlp_computes_the_narrow_ones_outputs(tmp_path: Path, capsys):
    def run(*sizes: str):
        overrides = tiny_run_overrides(*sizes, f"train.init_from={tmp_path / 'small.pt'}")
        return check_config(compose_train_config(overrides))

    small = Learner(run("model.mlp_hidden=[32,16]"), torch.device("cpu"))
    save_warm_start(small, tmp_path / "small.pt")
    big_run = run("model.mlp_hidden=[48,16]", "model.value_hidden=80")
    big = Learner(big_run, torch.device("cpu"))
    RunCheckpoints(tmp_path / "run", big_run, {}).restore(big)
    assert "grown from mlp 32x16" in capsys.readouterr().out
    states = random_play_states(big_run.game, 64, np.random.default_rng(0))
    planes = torch.from_numpy(np.stack([big_run.game.encode(s) for s in states]))
    small.model.eval(), big.model.eval()
    with torch.no_grad():
        ours, theirs = big.model(planes), small.model(planes)
    for head in ("policy", "value"):
        torch.testing.assert_close(ours[head], theirs[head], atol=1e-5, rtol=1e-5)


def test_an_mlp_grows_in_width_only():
    mlp = ModelConfig(arch="mlp", mlp_hidden=(256, 256), value_hidden=64)
    assert can_grow(mlp, replace(mlp, mlp_hidden=(512, 256)))
    assert can_grow(mlp, replace(mlp, value_hidden=128))
    assert not can_grow(mlp, mlp)
    assert not can_grow(mlp, replace(mlp, mlp_hidden=(512, 128)))  # one layer narrower
    assert not can_grow(mlp, replace(mlp, mlp_hidden=(256, 256, 256)))  # a new layer
    assert not can_grow(mlp, replace(SHIPPED, blocks=4))  # another architecture
    assert size_name(mlp) == "mlp 256x256" and size_name(SHIPPED) == "3x32"
