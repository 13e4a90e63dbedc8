"""The numerical tic-tac-toe agent shipped in checkpoints/ (``experiment=numerical_ttt``, seed 0,
judged perfect by its run): it carries the verdict, plays as the verdict walked it (float32,
each position on a fresh tree), and holds every opponent line as first and as second player at
the raw policy (here) and at 32, 200 and 800 simulations, position by position and, with
``tree_reuse=True``, in games with the tree kept too (slow: a few minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ultimate_rl
from ultimate_rl.evaluate.solved import every_line_walks
from ultimate_rl.games import make
from ultimate_rl.nn.evaluator import PIN_ENV

AGENT = Path(__file__).resolve().parents[1] / "checkpoints" / "numerical_ttt_agent.urla"


def walks(num_simulations: int, monkeypatch: pytest.MonkeyPatch, **options: object) -> dict:
    """Both sides' every-line walks of the shipped agent at ``num_simulations`` (``options``: its
    other settings), on the path its ``inference=auto`` takes (the suite's pinned path lifted)."""
    monkeypatch.delenv(PIN_ENV)
    agent = ultimate_rl.load_agent(AGENT, num_simulations=num_simulations, **options)
    assert agent.checkpoint.judged_perfect
    assert agent.evaluate.choice.path in ("torch", "onnxruntime")  # float32
    found = every_line_walks(make("numerical_ttt"), agent)
    assert found is not None
    return found


def assert_holds(found: dict, in_games: bool) -> None:
    for side in ("first", "second"):
        walk = found[side]
        assert walk["lost"] == 0 and walk["worst"] >= walk["required"], (side, walk)
        assert ("worst_in_games" in walk) is in_games, (side, walk)
        if in_games:
            assert walk["worst_in_games"] >= walk["required"], (side, walk)
    assert found["first"]["required"] == 1 and found["second"]["required"] == 0


def test_the_raw_policy_holds_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    assert_holds(walks(0, monkeypatch), in_games=False)


def test_the_judged_agent_searches_each_position_on_a_fresh_tree() -> None:
    """Its verdict walked positions, so its games do not keep a tree unless asked to."""
    assert not ultimate_rl.load_agent(AGENT, num_simulations=32).search_config.tree_reuse
    kept = ultimate_rl.load_agent(AGENT, num_simulations=32, tree_reuse=True)
    assert kept.search_config.tree_reuse


@pytest.mark.slow
@pytest.mark.parametrize("num_simulations", [32, 200, 800])
def test_the_search_holds_every_line_in_games_too(
    num_simulations: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_holds(walks(num_simulations, monkeypatch, tree_reuse=True), in_games=True)
