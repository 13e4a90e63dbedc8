"""Exported agents: the .urla round trip, load_agent, clear errors, the CLI, and ONNX vs torch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import random_play_states

from ultimate_rl.agents.network import NetworkAgent
from ultimate_rl.export import (
    BundleError,
    BundleNotFoundError,
    export_agent,
    export_onnx,
    onnx_max_difference,
    read_bundle,
)
from ultimate_rl.games import make
from ultimate_rl.loading import load_agent
from ultimate_rl.nn import ModelConfig, build_model, masked_softmax, save_checkpoint
from ultimate_rl.nn.evaluator import PATHS, PIN_ENV

ROOT = Path(__file__).resolve().parents[1]
SMALL_NETS = {
    "tictactoe": ModelConfig(arch="mlp", mlp_hidden=(32,), value_hidden=16),
    "uttt": ModelConfig(arch="resnet", blocks=1, channels=8, value_hidden=16, value_head="scalar"),
}


def make_checkpoint(tmp_path: Path, game_name: str) -> tuple[Path, torch.nn.Module]:
    game = make(game_name)
    model = build_model(game, SMALL_NETS[game_name], seed=1)
    with torch.no_grad():  # BatchNorm running stats away from their defaults, so they must travel
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    path = save_checkpoint(
        tmp_path / "ckpt.pt", model=model, model_config=model.config, game_name=game_name, step=42
    )
    return path, model.eval()


def policies(model: torch.nn.Module, game, states: list[np.ndarray]) -> np.ndarray:
    planes = torch.from_numpy(np.stack([game.encode(s) for s in states]))
    masks = torch.from_numpy(np.stack([game.legal_mask(s) for s in states]))
    with torch.inference_mode():
        return masked_softmax(model(planes)["policy"], masks).numpy()


@pytest.mark.parametrize("game_name", ["tictactoe", "uttt"])
def test_round_trip_keeps_the_network_and_the_settings(tmp_path: Path, game_name: str) -> None:
    checkpoint, model = make_checkpoint(tmp_path, game_name)
    out = tmp_path / "agent.urla"
    export_agent(checkpoint, out, search={"num_simulations": 16}, metadata={"note": "test"})
    raw = torch.load(out, weights_only=True)  # plain data only
    assert raw["format"] == "ultimate_rl.agent" and raw["game"]["name"] == game_name
    bundle = read_bundle(out)
    assert bundle.metadata["step"] == 42 and bundle.metadata["note"] == "test"
    assert bundle.search == {"num_simulations": 16}
    game = make(game_name)
    states = random_play_states(game, 12, np.random.default_rng(0))
    expected = policies(model, game, states)
    np.testing.assert_array_equal(policies(bundle.build_model("cpu"), game, states), expected)
    agent = load_agent(out, num_simulations=0, device="cpu")
    for state, policy in zip(states, expected, strict=True):
        analysis = agent.analyse(game, state)
        np.testing.assert_allclose(analysis.policy, policy, atol=1e-6)
        assert agent.select_action(game, state) == int(np.argmax(policy))


def test_load_agent_searches_with_the_stored_defaults(tmp_path: Path) -> None:
    checkpoint, _ = make_checkpoint(tmp_path, "tictactoe")
    out = tmp_path / "agent.urla"
    export_agent(checkpoint, out, search={"num_simulations": 8})
    agent = load_agent(out, device="cpu", seed=0)
    game = make("tictactoe")
    state = game.initial_state()
    assert agent.num_simulations == 8
    assert game.legal_mask(state)[agent.select_action(game, state)]
    assert load_agent(out, num_simulations=3, device="cpu").num_simulations == 3


def test_an_agent_file_exports_again_with_new_search_defaults(tmp_path: Path) -> None:
    checkpoint, _ = make_checkpoint(tmp_path, "tictactoe")
    first = export_agent(checkpoint, tmp_path / "a.urla", search={"num_simulations": 8})
    second = export_agent(
        tmp_path / "a.urla", tmp_path / "b.urla", search={"num_simulations": 99, "time_per_move": 2}
    )
    assert read_bundle(tmp_path / "b.urla").search == {"num_simulations": 99, "time_per_move": 2}
    assert second.metadata["step"] == first.metadata["step"] == 42
    assert "search_defaults_set_at" in second.metadata
    for key, value in first.model_state.items():
        assert torch.equal(second.model_state[key], value), key
    agent = load_agent(tmp_path / "b.urla", device="cpu")
    assert agent.num_simulations == 99 and agent.time_per_move == 2.0


def test_agent_file_has_the_modes_of_a_user_file(tmp_path: Path) -> None:
    checkpoint, _ = make_checkpoint(tmp_path, "tictactoe")
    previous = os.umask(0o027)
    try:
        out = export_agent(checkpoint, tmp_path / "agent.urla").path
    finally:
        os.umask(previous)
    assert out is not None and out.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.urla", "ckpt.pt"]


def test_bad_agent_files_get_clear_errors(tmp_path: Path) -> None:
    checkpoint, _ = make_checkpoint(tmp_path, "tictactoe")
    with pytest.raises(BundleNotFoundError, match="no agent file"):
        read_bundle(tmp_path / "missing.urla")
    with pytest.raises(BundleNotFoundError, match="folder"):
        read_bundle(tmp_path)
    garbage = tmp_path / "garbage.urla"
    garbage.write_bytes(b"not a torch file at all")
    with pytest.raises(BundleError, match="damaged"):
        read_bundle(garbage)
    with pytest.raises(BundleError, match="training checkpoint: export it"):
        read_bundle(checkpoint)
    good = tmp_path / "good.urla"
    export_agent(checkpoint, good)
    payload = torch.load(good, weights_only=True)

    def broken(name: str, change) -> Path:
        copy = {**payload, "game": dict(payload["game"]), "encoding": dict(payload["encoding"])}
        copy["model"] = {
            "config": dict(payload["model"]["config"]),
            "state": payload["model"]["state"],
        }
        change(copy)
        path = tmp_path / f"{name}.urla"
        torch.save(copy, path)
        return path

    cases = {
        "newer": (lambda p: p.update(format_version=99), "upgrade ultimate_rl"),
        "stale": (lambda p: p["encoding"].update(version="0" * 16), "input encoding"),
        "nogame": (lambda p: p.pop("game"), "incomplete agent file"),
        "badgame": (lambda p: p["game"].update(name="chess"), "cannot be made"),
        "weights": (lambda p: p["model"]["config"].update(mlp_hidden=[64]), "do not fit"),
        "config": (lambda p: p["model"]["config"].update(wings=2), "malformed"),
    }
    for name, (change, words) in cases.items():
        with pytest.raises(BundleError, match=words):
            read_bundle(broken(name, change))
    with pytest.raises(FileNotFoundError):
        export_agent(tmp_path / "nope.pt", tmp_path / "x.urla")


def test_export_script(tmp_path: Path) -> None:
    checkpoint, _ = make_checkpoint(tmp_path, "tictactoe")
    out = tmp_path / "cli.urla"
    result = subprocess.run(
        [
            sys.executable,
            "scripts/export.py",
            f"checkpoint={checkpoint}",
            f"out={out}",
            "agent.num_simulations=5",
            "metadata={trained_by: 'a test', note: run 7}",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert f"wrote {out}" in result.stdout
    assert read_bundle(out).search["num_simulations"] == 5
    assert read_bundle(out).metadata["trained_by"] == "a test"
    assert read_bundle(out).metadata["note"] == "run 7"
    missing = subprocess.run(
        [sys.executable, "scripts/export.py", f"checkpoint={tmp_path / 'nope.pt'}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert missing.returncode != 0 and "no checkpoint" in missing.stderr


def test_onnx_gives_the_same_outputs_as_torch(tmp_path: Path) -> None:
    checkpoint, _ = make_checkpoint(tmp_path, "uttt")
    bundle = export_agent(checkpoint, tmp_path / "agent.urla")
    model = bundle.build_model("cpu")
    path = export_onnx(model, tmp_path / "agent.onnx")
    game = make("uttt")
    for count in (1, 7):  # the batch axis is dynamic
        states = random_play_states(game, count, np.random.default_rng(count))
        planes = np.stack([game.encode(s) for s in states])
        assert onnx_max_difference(model, path, planes) < 1e-4


@pytest.mark.parametrize("perfect", [False, True])
def test_a_network_judged_perfect_plays_as_it_was_walked(
    tmp_path: Path, perfect: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its run's verdict was walked in float32, each position on a fresh tree, so
    ``inference=auto`` takes no reduced path for it and its search keeps no tree between moves
    (its checkpoint and its agent file alike); another network has int8 among the paths
    ``auto`` times and keeps its tree."""
    monkeypatch.delenv(PIN_ENV)  # the suite pins a path (conftest.py)
    game = make("numerical_ttt")
    config = ModelConfig(arch="mlp", mlp_hidden=(16,))
    path = save_checkpoint(
        tmp_path / "n.pt",
        model=build_model(game, config, seed=0),
        model_config=config,
        game_name="numerical_ttt",
        step=3,
        extra={"progress": {"perfect": perfect}},
    )
    out = tmp_path / "n.urla"
    export_agent(path, out)
    assert read_bundle(out).metadata["judged_perfect"] is perfect
    for agent in (NetworkAgent(path, num_simulations=0), load_agent(out, num_simulations=0)):
        assert agent.checkpoint.judged_perfect is perfect
        assert agent.search_config.tree_reuse is not perfect
        choice = agent.evaluate.choice
        assert ("onnxruntime_int8" in choice.positions_per_s) is not perfect
        assert choice.path in (PATHS if not perfect else ("torch", "onnxruntime"))
