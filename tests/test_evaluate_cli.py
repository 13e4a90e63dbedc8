"""scripts/evaluate.py: bad input fails before any game; a small real run writes the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ultimate_rl.evaluate import EvaluationError
from ultimate_rl.evaluate.cli import evaluate_from_config, run_checkpoints, settings_from_config

ROOT = Path(__file__).resolve().parents[1]


def base_config(tmp_path: Path, **overrides: object) -> dict[str, object]:
    cfg: dict[str, object] = {
        "checkpoint": None,
        "run": None,
        "agents": None,
        "game": None,
        "network": {"num_simulations": 0},
        "ladder": ["random", "uct:num_simulations=20"],
        "games_per_opponent": 4,
        "workers": 1,
        "progress": False,
        "solved_positions": 0,
        "output_dir": str(tmp_path / "out"),
        "plot": False,
    }
    return {**cfg, **overrides}


def test_exactly_one_mode_is_required(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="exactly one of"):
        evaluate_from_config(base_config(tmp_path))
    with pytest.raises(EvaluationError, match="exactly one of"):
        evaluate_from_config(base_config(tmp_path, checkpoint="a.pt", run="runs/x"))
    with pytest.raises(EvaluationError, match="game=uttt"):
        evaluate_from_config(base_config(tmp_path, agents=["random"]))


def test_missing_run_folder_or_checkpoint_is_named(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="no checkpoints/ folder"):
        run_checkpoints(tmp_path)
    (tmp_path / "checkpoints").mkdir()
    with pytest.raises(EvaluationError, match=r"no \*\.pt checkpoint"):
        run_checkpoints(tmp_path)
    with pytest.raises(EvaluationError, match="no checkpoint at"):
        evaluate_from_config(base_config(tmp_path, checkpoint=str(tmp_path / "nope.pt")))
    assert not (tmp_path / "out").exists()


def test_settings_and_sprt_come_from_the_config(tmp_path: Path) -> None:
    settings = settings_from_config(
        base_config(tmp_path, sprt={"elo0": 0, "elo1": 30}, anchor="random")
    )
    assert settings.games_per_opponent == 4 and settings.anchor == "random"
    assert settings.sprt is not None and settings.sprt.elo1 == 30


def save_tictactoe_checkpoint(path: Path, step: int, extra: dict | None = None) -> Path:
    from ultimate_rl.games import make
    from ultimate_rl.nn import ModelConfig, build_model, save_checkpoint

    config = ModelConfig(arch="mlp", mlp_hidden=(16,))
    save_checkpoint(
        path,
        model=build_model(make("tictactoe"), config),
        model_config=config,
        game_name="tictactoe",
        game_options={"size": 3, "k": 3},
        step=step,
        extra=extra,
    )
    return path


def test_agents_already_in_the_ladder_play_once_as_agents(tmp_path: Path) -> None:
    """The README's round robin names two rungs of the default ladder: one player each."""
    ladder = ["random", "uct:num_simulations=20", "uct:num_simulations=40"]
    evaluation, _ = evaluate_from_config(
        base_config(
            tmp_path,
            game="tictactoe",
            agents=["random", "uct:num_simulations=20"],
            ladder=ladder,
            games_per_opponent=2,
        )
    )
    assert evaluation.subjects == ["random", "uct-20"] and evaluation.opponents == ["uct-40"]
    pairs = [{m.agent_a.label, m.agent_b.label} for m in evaluation.matches]
    assert sorted(map(sorted, pairs)) == [
        ["random", "uct-20"],
        ["random", "uct-40"],
        ["uct-20", "uct-40"],
    ]
    with pytest.raises(EvaluationError, match="appear twice"):  # another player, the same name
        evaluate_from_config(
            base_config(tmp_path, game="tictactoe", agents=["uct:num_simulations=20,seed=3"])
        )


def test_run_mode_rates_every_checkpoint_against_its_step(tmp_path: Path) -> None:
    for step in (10, 20):
        save_tictactoe_checkpoint(tmp_path / "run" / "checkpoints" / f"step_{step}.pt", step)
    evaluation, written = evaluate_from_config(
        base_config(tmp_path, run=str(tmp_path / "run"), output_dir=None, plot=True)
    )
    assert evaluation.steps == {"step-10": 10, "step-20": 20}
    assert [p.name for p in written] == ["evaluation.json", "evaluation.md", "elo.png"]
    assert written[0].parent == tmp_path / "run" / "evaluation"
    assert set(evaluation.ratings.names) == {"random", "uct-20", "step-10", "step-20"}


def test_an_exported_agent_file_plays_with_its_own_search_defaults(tmp_path: Path) -> None:
    from ultimate_rl.export import export_agent

    checkpoint = save_tictactoe_checkpoint(tmp_path / "ckpt.pt", 30)
    agent_file = tmp_path / "my_agent.urla"
    export_agent(checkpoint, agent_file, search={"num_simulations": 3})
    evaluation, _ = evaluate_from_config(
        base_config(tmp_path, checkpoint=str(agent_file), network={"num_simulations": None})
    )
    assert evaluation.subjects == ["my_agent"] and evaluation.steps == {"my_agent": 30}
    played = evaluation.matches_of("my_agent")
    assert [m.agent_a.kwargs.get("path") for m in played] == [str(agent_file)] * 2
    assert all("num_simulations" not in m.agent_a.kwargs for m in played)  # the file's own 3
    assert sum(m.summary()["games"] for m in played) == 8
    agent_file.write_bytes(b"not an agent")
    with pytest.raises(EvaluationError, match=r"my_agent\.urla"):
        evaluate_from_config(base_config(tmp_path, checkpoint=str(agent_file)))


def test_a_simulation_sweep_plays_one_agent_file_at_each_count(tmp_path: Path) -> None:
    """``network.num_simulations=[...]`` with one agent file: one player per count, each against
    the opponent(s) only (no round robin), and a score-by-simulations table in the report."""
    from ultimate_rl.export import export_agent

    agent_file = tmp_path / "swept.urla"
    export_agent(save_tictactoe_checkpoint(tmp_path / "ckpt.pt", 5), agent_file)
    evaluation, written = evaluate_from_config(
        base_config(
            tmp_path,
            checkpoint=str(agent_file),
            network={"num_simulations": [0, 2, 8]},
            ladder=["uct:num_simulations=20"],
        )
    )
    assert evaluation.subjects == ["swept@0", "swept@2", "swept@8"]
    assert [(m.agent_a.label, m.agent_b.label) for m in evaluation.matches] == [
        (f"swept@{n}", "uct-20") for n in (0, 2, 8)
    ]
    assert [m.agent_a.kwargs["num_simulations"] for m in evaluation.matches] == [0, 2, 8]
    table = written[1].read_text()
    assert (
        "| player | simulations | opponent |" in table and "| swept@8 | 8 | uct-20 | 4 |" in table
    )
    with pytest.raises(EvaluationError, match="distinct counts"):
        evaluate_from_config(
            base_config(tmp_path, checkpoint=str(agent_file), network={"num_simulations": [2, 2]})
        )
    save_tictactoe_checkpoint(tmp_path / "run" / "checkpoints" / "step_1.pt", 1)
    with pytest.raises(EvaluationError, match="one checkpoint=PATH"):
        evaluate_from_config(
            base_config(tmp_path, run=str(tmp_path / "run"), network={"num_simulations": [1, 2]})
        )


@pytest.mark.slow
def test_script_round_robin_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        str(ROOT / "scripts" / "evaluate.py"),
        "game=tictactoe",
        "agents=[random,'uct:num_simulations=50']",
        "ladder=[]",
        "games_per_opponent=6",
        "workers=1",
        "solved_positions=20",
        "perfect_games=2",
        f"output_dir={out}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=os.environ)
    assert done.returncode == 0, done.stderr
    assert "| uct-50 |" in done.stdout
    data = json.loads((out / "evaluation.json").read_text())
    assert set(data["solved"]) == {"random", "uct-50"}
    assert (out / "elo.png").stat().st_size > 1000
    bad = subprocess.run(
        [*cmd[:3], "agents=[random,'nosuchagent']", "ladder=[]"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "nosuchagent" in bad.stderr


def test_run_mode_draws_the_learning_curve_by_training_minute(tmp_path: Path) -> None:
    """Snapshots that store their minute give curve.md rows at that minute; a run without them
    (older runs) takes each step's minute from its TensorBoard scalars, as the run logs them."""
    from torch.utils.tensorboard import SummaryWriter

    from ultimate_rl.evaluate import curve
    from ultimate_rl.evaluate.curve import snapshot_minutes
    from ultimate_rl.train.logs import MINUTES_TAG, STEP_TAG

    assert (curve.STEP_TAG, curve.MINUTES_TAG) == (STEP_TAG, MINUTES_TAG)  # the run's own tags

    run = tmp_path / "run"
    for step in (10, 20):
        save_tictactoe_checkpoint(
            run / "checkpoints" / f"iter_{step}.pt", step, extra={"minutes": step / 4}
        )
    evaluation, written = evaluate_from_config(base_config(tmp_path, run=str(run), plot=True))
    assert [p.name for p in written][-2:] == ["curve.md", "curve.png"]
    lines = written[-2].read_text().splitlines()
    rows = [line.split(" | ") for line in lines if "| uct-20" in line]
    assert [(row[0], row[1]) for row in rows] == [("| 2.5", "10"), ("| 5.0", "20")]
    for row, label in zip(rows, ("step-10", "step-20"), strict=True):
        (match,) = [m for m in evaluation.matches_of(label) if "uct-20" in m.agent_b.label]
        assert float(row[-1].strip(" |")) == pytest.approx(match.score, abs=1e-3)

    writer = SummaryWriter(str(run / "tensorboard"))  # scalars by iteration, as train.logs
    for iteration, (step, minutes) in enumerate(((5, 0.5), (10, 1.5), (20, 3.0)), start=1):
        writer.add_scalar(STEP_TAG, step, iteration)
        writer.add_scalar(MINUTES_TAG, minutes, iteration)
    writer.close()
    assert snapshot_minutes(run, [(10, {}), (20, {"minutes": 7.0})]) == {10: 1.5, 20: 7.0}


def every_line_by_recursion(game, agent, side: int) -> dict[str, int]:
    """``agent``'s walk as ``side`` by plain recursion over every opponent line: the worst result
    on a line that passes through a position not lost for ``side``, the positions met where
    ``side`` moves with its value at stake, and those where its move gives that value away."""
    from ultimate_rl.agents.every_line import required
    from ultimate_rl.games import kernels, layout, solve

    floor = required(game, side)
    at_stake: dict[bytes, bool] = {}

    def value(state) -> int:  # the solver's, ``side``'s view
        result = solve(game, state)[0]
        return result if state[layout.PLAYER] == side else -result

    def walk(state, held: bool) -> int:
        if state[layout.STATUS] != layout.ONGOING:
            result = int(kernels.outcome(state)) * (1 if side == 0 else -1)
            return result if held or result >= 0 else 1
        held = held or value(state) >= floor
        mine = state[layout.PLAYER] == side
        moves = [agent.select_action(game, state)] if mine else game.legal_actions(state)
        worst = 1
        for move in moves:
            child = state.copy()
            kernels.apply(child, int(move))
            if mine and value(state) >= floor:
                after = value(child) if child[layout.STATUS] == layout.ONGOING else None
                if after is None:
                    after = int(kernels.outcome(child)) * (1 if side == 0 else -1)
                at_stake[state.tobytes()] = after < floor
            worst = min(worst, walk(child, held))
        return worst

    worst = walk(game.initial_state(), False)
    return {"worst": worst, "at_stake": len(at_stake), "lost": sum(at_stake.values())}


def test_solved_games_walk_every_line_of_each_network_player(tmp_path: Path) -> None:
    """Each network player of a sweep is walked against every opponent line as either side, at
    its own budget; the raw policy's worst lines match a plain recursion over the lines."""
    from ultimate_rl import agents
    from ultimate_rl.evaluate.solved import SolvedReport, every_line_walks

    checkpoint = save_tictactoe_checkpoint(tmp_path / "ckpt.pt", 5)
    evaluation, written = evaluate_from_config(
        base_config(
            tmp_path,
            checkpoint=str(checkpoint),
            network={"num_simulations": [0, 4]},
            ladder=["random"],
            games_per_opponent=2,
            solved_positions=10,
            perfect_games=2,
        )
    )
    raw = agents.make("network", checkpoint=str(checkpoint), num_simulations=0)
    game = raw.checkpoint.make_game()
    for label, budget in (("step-5@0", 0), ("step-5@4", 4)):
        walks = evaluation.solved[label].every_line
        agent = agents.make("network", checkpoint=str(checkpoint), num_simulations=budget)
        assert walks == every_line_walks(game, agent)
        assert set(walks) == {"first", "second"} and walks["first"]["required"] == 0
    walks = evaluation.solved["step-5@0"].every_line
    for side, name in enumerate(("first", "second")):
        found = {k: walks[name][k] for k in ("worst", "at_stake", "lost")}
        assert found == every_line_by_recursion(game, raw, side)
    lost = [s for s in ("first", "second") if walks[s]["worst"] < 0]
    assert lost and all(walks[s]["lost"] > 0 for s in lost)  # an untrained network loses lines
    assert evaluation.solved["step-5@0"].holds_every_line is False
    table = written[1].read_text()
    assert "| every line as first | as second | walked on |" in table
    assert walks["first"]["inference"] == "onnxruntime"  # the suite's pinned path (conftest.py)
    assert f"lost at {walks[lost[0]]['lost']:,} of {walks[lost[0]]['at_stake']:,}" in table
    data = json.loads(written[0].read_text())
    assert data["solved"]["step-5@4"]["every_line"] == evaluation.solved["step-5@4"].every_line
    assert evaluation.scalars("step-5@0")["every_line/lost_second"] == walks["second"]["lost"]
    # what the walk cannot follow, and the verdict's three answers
    timed = agents.make("network", checkpoint=str(checkpoint), num_simulations=4, time_per_move=1)
    assert every_line_walks(game, timed) is None
    assert every_line_walks(game, agents.make("random")) is None
    held = {"worst": 0, "required": 0, "at_stake": 3, "lost": 0}
    report = SolvedReport(1, 1, evaluation.solved["step-5@0"].vs_perfect, {"first": held})
    assert report.holds_every_line is True
    report.every_line = {"first": held, "second": {**held, "worst": None}}
    assert report.holds_every_line is None
    report.every_line = {"first": {**held, "worst_in_games": -1}, "second": held}
    assert report.holds_every_line is False


def test_a_network_that_holds_by_position_is_walked_in_games_too(tmp_path, monkeypatch):
    """Where every position's search keeps the value, the games with the tree kept are walked
    as well (``worst_game_line``), and a line lost there is the verdict."""
    from ultimate_rl import agents
    from ultimate_rl.agents import every_line
    from ultimate_rl.evaluate.report import _walk_cell
    from ultimate_rl.evaluate.solved import every_line_walks

    checkpoint = save_tictactoe_checkpoint(tmp_path / "ckpt.pt", 5)
    walks = []

    walk_at_stake = every_line.walk_at_stake

    def held(game, evaluate, side, budget=0, search=None, in_games=False):
        if in_games:  # the real walk, of the games below
            return walk_at_stake(game, evaluate, side, budget, search, in_games=True)
        return every_line.StakeWalk(game.initial_state()[None], np.zeros(1, bool), 0)

    def lost_in_games(game, evaluate, side, num_simulations, search=None, met=None):
        walks.append((side, num_simulations, search.tree_reuse))
        return -1

    monkeypatch.setattr(every_line, "walk_at_stake", held)
    monkeypatch.setattr(every_line, "worst_game_line", lost_in_games)
    for budget, reuse in ((0, True), (4, False), (4, True)):
        agent = agents.make(
            "network", checkpoint=str(checkpoint), num_simulations=budget, tree_reuse=reuse
        )
        found = every_line_walks(agent.checkpoint.make_game(), agent)
        in_games = [w.get("worst_in_games") for w in found.values()]
        assert in_games == ([-1, -1] if budget and reuse else [None, None])
    assert walks == [(0, 4, True), (1, 4, True)]
    assert _walk_cell(found["first"]) == "held by position, lost in a game (tree kept)"
