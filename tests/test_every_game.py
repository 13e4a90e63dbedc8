"""Every registered game works in every layer, and no code outside ``games/`` singles one out.

``tests/test_game_api.py`` runs the shared game-API test over the same list; this file adds the
env checker, each renderer, move notation and a tiny training run whose agent is exported,
loaded and played, so a game added to
``games.registry`` is proven end to end without a test naming it.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from helpers import tiny_run_overrides

from ultimate_rl import load_agent
from ultimate_rl.envs import ENV_IDS
from ultimate_rl.envs.render import render_rgb
from ultimate_rl.export import export_agent
from ultimate_rl.games import make
from ultimate_rl.games.registry import GAME_NAMES
from ultimate_rl.nn import load_checkpoint
from ultimate_rl.play.notation import parse_move
from ultimate_rl.play.terminal import draw_board
from ultimate_rl.play.view import board_view
from ultimate_rl.train import train
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.run import compose_train_config
from ultimate_rl.train.tensorboard import probe_image

ROOT = Path(__file__).resolve().parents[1]
EVERY_GAME = pytest.mark.parametrize("name", GAME_NAMES)


def random_game(name: str, seed: int) -> tuple[list[np.ndarray], list[int]]:
    """The states (start included) and actions of one random game to its end."""
    game = make(name)
    rng = np.random.default_rng(seed)
    states, actions = [game.initial_state()], []
    while not game.is_terminal(states[-1]):
        actions.append(int(rng.choice(game.legal_actions(states[-1]))))
        states.append(game.apply(states[-1], actions[-1]))
    return states, actions


@EVERY_GAME
def test_env_id_passes_the_gymnasium_checker(name: str) -> None:
    env_id = next(env_id for env_id, game in ENV_IDS.items() if game == name)
    env = gym.make(env_id, render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=False)


@EVERY_GAME
def test_views_and_pictures_follow_a_whole_game(name: str) -> None:
    """At every ply: the view's cells hold exactly the pieces played, each legal action is
    offered on its cell, the last move is marked, and every renderer draws the position."""
    game = make(name)
    states, _ = random_game(name, seed=1)
    shape = game.board_shape
    for ply, state in enumerate(states):
        view = board_view(game, state)
        assert len(view.cells) == len(view.owners) == shape.cells
        assert sum(owner >= 0 for owner in view.owners) <= ply
        assert view.owners.count(0) - view.owners.count(1) in (0, 1)
        offered = sorted(a for actions_here in view.cell_actions for a in actions_here)
        legal = [] if game.is_terminal(state) else game.legal_actions(state).tolist()
        assert offered == legal
        if ply:
            last = view.last_cell
            assert last is not None and view.owners[last] == (ply - 1) % 2
        text = draw_board(view)
        assert len(text.splitlines()) >= shape.rows
        image = render_rgb(game, state)
        assert image.dtype == np.uint8 and image.shape[2] == 3 and image.shape[0] % 2 == 0
    final = board_view(game, states[-1])
    assert bool(final.winning_cells) == (game.winner(states[-1]) is not None)
    assert all(final.owners[c] == game.winner(states[-1]) for c in final.winning_cells) or (
        shape.block  # uttt highlights whole small boards, whose cells either player may hold
    )


@EVERY_GAME
def test_move_text_reads_back_for_every_legal_move(name: str) -> None:
    game = make(name)
    states, _ = random_game(name, seed=2)
    for state in states[:-1]:
        for action in game.legal_actions(state):
            text = game.move_text(int(action)).split(" (")[0]
            assert parse_move(game, state, text) == action


@EVERY_GAME
def test_probe_image_draws_on_the_board_grid(name: str) -> None:
    game = make(name)
    states, _ = random_game(name, seed=3)
    probes = np.stack(states[:3])
    policies = np.zeros((3, game.num_actions), dtype=np.float32)
    for row, state in enumerate(probes):
        legal = game.legal_actions(state)
        policies[row, legal] = 1.0 / len(legal)
    image = probe_image(game, probes, policies, np.array([-1.0, 0.0, 1.0]))
    assert image.shape[0] == 3 and image.shape[1] == 12 * game.board_shape.rows
    assert image.min() >= 0.0 and image.max() <= 1.0 and image[0].max() == 1.0


@EVERY_GAME
def test_a_tiny_training_run(name: str, tmp_path: Path) -> None:
    overrides = tiny_run_overrides(f"game={name}", "model.board_size=null", "train.iterations=1")
    run = compose_train_config(overrides)
    summary = train(run, tmp_path)
    assert summary["iterations"] == 1
    checkpoint = load_checkpoint(tmp_path / CHECKPOINT, expected_game=name)
    assert checkpoint.step == 5
    # export, load the agent file, and let it move: the play site's path for a trained agent
    export_agent(tmp_path / CHECKPOINT, tmp_path / "agent.urla", {"num_simulations": 4})
    agent = load_agent(tmp_path / "agent.urla")
    game, state = make(name), make(name).initial_state()
    assert game.legal_mask(state)[int(agent.select_action(game, state))]


def _named_game_comparisons(path: Path) -> list[str]:
    """``x == "uttt"``-style comparisons (and ``in (...)`` tests) with a game's name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            for part in parts:
                items = part.elts if isinstance(part, ast.Tuple | ast.List | ast.Set) else [part]
                for item in items:
                    if isinstance(item, ast.Constant) and item.value in GAME_NAMES:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_module_outside_games_compares_a_game_name() -> None:
    package = ROOT / "ultimate_rl"
    modules = [p for p in package.rglob("*.py") if "games" not in p.relative_to(package).parts]
    found = [hit for path in modules for hit in _named_game_comparisons(path)]
    assert not found, f"code outside games/ singles out a game by name: {found}"
    page = (package / "play" / "web" / "app.js").read_text()
    assert not [n for n in GAME_NAMES if f'"{n}"' in page], "the page names a game"
