"""Checkpoints: round trip, atomic writes, and a clear error for every kind of bad file."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import ultimate_rl.games as games
from ultimate_rl.nn import (
    FORMAT_VERSION,
    CheckpointError,
    CheckpointNotFoundError,
    ModelConfig,
    WrongGameError,
    build_model,
    load_checkpoint,
    load_model,
    make_evaluator,
    save_checkpoint,
)
from ultimate_rl.nn.atomic import remove_stale_temp_files

CONFIG = ModelConfig(arch="resnet", blocks=1, channels=8, value_hidden=8, value_head="wdl")


@pytest.fixture
def game():
    return games.make("tictactoe")


@pytest.fixture
def model(game):
    return build_model(game, CONFIG, seed=3)


def save(path, model, **overrides):
    options = {"game_name": "tictactoe", "game_options": {"size": 3, "k": 3}, "step": 12}
    options.update(overrides)
    return save_checkpoint(path, model=model, model_config=model.config, **options)


def test_round_trip_gives_the_same_outputs_and_metadata(tmp_path, game, model):
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.zeros(2, *game.observation_shape))["policy"].sum().backward()
    optimiser.step()
    extra = {"rng": np.random.default_rng(0).bit_generator.state, "note": "x"}
    path = save(tmp_path / "ckpt.pt", model, optimizer_state=optimiser.state_dict(), extra=extra)
    ckpt = load_checkpoint(path, expected_game=game)
    assert (ckpt.step, ckpt.game_name, ckpt.format_version) == (12, "tictactoe", FORMAT_VERSION)
    assert ckpt.model_config == CONFIG
    assert ckpt.extra == extra
    restored = torch.optim.Adam(model.parameters(), lr=1e-3)
    restored.load_state_dict(ckpt.optimizer_state)  # a usable optimiser state

    state = game.apply(game.initial_state(), 4)
    planes, masks = game.encode(state)[None], game.legal_mask(state)[None]
    before = make_evaluator(model, "cpu")(planes, masks)
    after = make_evaluator(load_model(path, "cpu"), "cpu")(planes, masks)
    for a, b in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_failed_write_leaves_the_old_file_intact_and_no_temp_file(tmp_path, model, monkeypatch):
    path = save(tmp_path / "ckpt.pt", model, step=1)
    original = path.read_bytes()

    def crash(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        save(path, model, step=2)
    monkeypatch.undo()
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]
    assert load_checkpoint(path).step == 1


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_written_file_mode_follows_the_umask(tmp_path, model, umask):
    previous = os.umask(umask)
    try:
        path = save(tmp_path / "ckpt.pt", model)
    finally:
        os.umask(previous)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_only_the_writers_leftover_temp_files_are_removed(tmp_path, model):
    path = save(tmp_path / "latest.pt", model)
    leftovers = [tmp_path / ".latest.pt.k3x_9q0a.tmp", tmp_path / ".iter_00002.pt.abcdefgh.tmp"]
    foreign = ["notes.tmp", ".latest.pt.tmp", ".latest.pt.ABCDEFGH.tmp", ".a.toolong123.tmp"]
    for leftover in leftovers:
        leftover.write_bytes(b"half a checkpoint")
    for name in foreign:
        (tmp_path / name).write_text("not ours")
    assert remove_stale_temp_files(tmp_path) == sorted(leftovers)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, *foreign])
    assert remove_stale_temp_files(tmp_path / "missing") == []


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointNotFoundError, match="no checkpoint at"):
        load_checkpoint(tmp_path / "nope.pt")
    with pytest.raises(FileNotFoundError):  # also catchable as the builtin
        load_model(tmp_path / "nope.pt")


def test_damaged_and_truncated_files(tmp_path, model):
    path = save(tmp_path / "ckpt.pt", model)
    data = path.read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(truncated)
    noise = tmp_path / "noise.pt"
    noise.write_bytes(b"this is not a checkpoint at all")
    with pytest.raises(CheckpointError, match="damaged"):
        load_checkpoint(noise)


def test_a_torch_file_that_is_not_ours(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"state_dict": {"w": torch.zeros(2)}}, path)
    with pytest.raises(CheckpointError, match="not an ultimate_rl checkpoint"):
        load_checkpoint(path)


def test_newer_format_version(tmp_path, model):
    path = save(tmp_path / "ckpt.pt", model)
    payload = torch.load(path, weights_only=True)
    payload["format_version"] = FORMAT_VERSION + 1
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match=r"newer.*upgrade"):
        load_checkpoint(path)


def test_wrong_game_names_both_games(tmp_path, model):
    path = save(tmp_path / "ckpt.pt", model)
    with pytest.raises(WrongGameError, match=r"'tictactoe'.*'numerical_ttt'"):
        load_checkpoint(path, expected_game=games.make("numerical_ttt"))
    with pytest.raises(WrongGameError, match=r"'tictactoe'.*'uttt'"):
        load_model(path, "cpu", expected_game="uttt")


def test_same_game_other_options_is_refused(tmp_path):
    game = games.make("tictactoe", size=4, k=4)
    model = build_model(game, CONFIG, seed=0)
    path = save(tmp_path / "ckpt.pt", model, game_options={"size": 4, "k": 4})
    load_checkpoint(path, expected_game=game)
    with pytest.raises(WrongGameError, match="other options"):
        load_checkpoint(path, expected_game=games.make("tictactoe", size=4, k=3))


@pytest.mark.parametrize("simulations", [0, 8])
def test_a_network_agent_encodes_as_its_network_learned_in_a_game_of_the_same_rules(
    tmp_path, simulations
):
    """uttt's threat planes change what a network reads, not the game: an agent of such a
    network plays a plain uttt game (and the reverse), while a run resuming from the checkpoint
    (the strict check) must have the same planes."""
    from ultimate_rl import agents

    plain, threats = games.make("uttt"), games.make("uttt", threat_planes=True)
    for trained, other in ((threats, plain), (plain, threats)):
        model = build_model(trained, CONFIG, seed=0)
        path = save(tmp_path / "ckpt.pt", model, game_name="uttt", game_options=trained.options)
        with pytest.raises(WrongGameError, match="other options"):
            load_checkpoint(path, expected_game=other)
        load_checkpoint(path).check_game(other, same_encoding=False)
        agent = agents.make("network", checkpoint=str(path), num_simulations=simulations)
        state = other.apply_sequence([40, 36])  # e5 d4: X to move in board 0
        seen = agent.analyse(other, state)
        assert np.array_equal(seen.policy, agent.analyse(trained, state).policy)
        assert agent.select_action(other, state) // 9 == 0


def test_extra_that_could_not_be_read_back_is_refused_at_save(tmp_path, model):
    with pytest.raises(TypeError, match=r"extra\['buffer'\].*torch.from_numpy"):
        save(tmp_path / "ckpt.pt", model, extra={"buffer": np.zeros(3)})
    assert not list(tmp_path.iterdir())


def test_model_config_defaults_to_the_models_and_must_match_it(tmp_path, game, model):
    path = save_checkpoint(tmp_path / "a.pt", model=model, game_name="tictactoe", step=0)
    assert load_checkpoint(path).model_config == model.config
    other = ModelConfig(arch="mlp")
    with pytest.raises(ValueError, match="not the config the model was built from"):
        save_checkpoint(
            tmp_path / "b.pt", model=model, model_config=other, game_name="tictactoe", step=0
        )
