"""Arena, ladder and reports with tiny agents defined here (no search needed, fast)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ultimate_rl.evaluate import (
    AgentSpec,
    EvaluationError,
    EvaluationSettings,
    MatchConfig,
    SPRTConfig,
    evaluate_agent,
    evaluate_agents,
    parse_spec,
    play_match,
    replay,
    write_report,
)
from ultimate_rl.evaluate.arena import match_opening
from ultimate_rl.games import Game, make, solve


class TinyRandom:
    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def select_action(self, game: Game, state: np.ndarray) -> int:
        return int(self.rng.choice(game.legal_actions(state)))


class FirstLegal:
    def select_action(self, game: Game, state: np.ndarray) -> int:
        return int(game.legal_actions(state)[0])


class Lookahead(TinyRandom):
    """Wins at once if it can, else blocks the opponent's immediate win, else plays randomly."""

    def select_action(self, game: Game, state: np.ndarray) -> int:
        me = game.current_player(state)
        legal = game.legal_actions(state)
        for action in legal:
            if game.winner(game.apply(state, int(action))) == me:
                return int(action)
        for action in legal:
            after = game.apply(state, int(action))
            if not game.is_terminal(after) and any(
                game.winner(game.apply(after, int(reply))) == 1 - me
                for reply in game.legal_actions(after)
            ):
                continue
            if game.is_terminal(after):
                return int(action)
        safe = [
            int(a)
            for a in legal
            if game.is_terminal(game.apply(state, int(a)))
            or not any(
                game.winner(game.apply(game.apply(state, int(a)), int(r))) == 1 - me
                for r in game.legal_actions(game.apply(state, int(a)))
            )
        ]
        return int(self.rng.choice(safe or legal))


class Perfect:
    def select_action(self, game: Game, state: np.ndarray) -> int:
        return int(solve(game, state)[1][0])


class Illegal:
    def select_action(self, game: Game, state: np.ndarray) -> int:
        return -1


BUILT: list[str] = []  # every agent built in this process, to count replayed games


def tiny_factory(spec: AgentSpec, seed: int | None) -> object:
    """The arena's agent factory for these tests (module level, so worker processes find it)."""
    BUILT.append(spec.label)
    if spec.name == "random":
        return TinyRandom(spec.kwargs.get("seed", seed))
    if spec.name == "lookahead":
        return Lookahead(spec.kwargs.get("seed", seed))
    if spec.name == "first":
        return FirstLegal()
    if spec.name == "illegal":
        return Illegal()
    if spec.name == "perfect":
        return Perfect()
    raise ValueError(f"unknown agent {spec.name!r}")


@pytest.fixture(scope="module")
def ttt() -> Game:
    return make("tictactoe")


def match(ttt: Game, a: str, b: str, path: Path | None = None, **config: object) -> object:
    settings = {"num_games": 8, "opening_plies": 2, "seed": 3, "workers": 1, "progress": False}
    return play_match(ttt, a, b, MatchConfig(**{**settings, **config}), path, tiny_factory)


def test_colours_alternate_and_each_opening_is_played_from_both_sides(ttt: Game) -> None:
    result = match(ttt, "random", "first", num_games=12)
    records = result.records
    assert [r.index for r in records] == list(range(12))
    for r in records:
        assert r.players == (("random", "first") if r.index % 2 == 0 else ("first", "random"))
        assert len(r.opening) == 2
        replay(ttt, r)  # moves and result are consistent with the rules
        assert len(r.times) == len(r.moves)
    for first, second in zip(records[::2], records[1::2], strict=True):
        assert first.opening == second.opening
    assert len({tuple(r.opening) for r in records}) > 1
    assert result.wins + result.draws + result.losses == 12


SHIPPED_GAMES = Path(__file__).resolve().parents[1] / "checkpoints/uttt_agent_evaluation/games"


@pytest.mark.parametrize("path", sorted(SHIPPED_GAMES.glob("*.jsonl")), ids=lambda p: p.stem)
def test_the_shipped_games_openings_are_drawn_again(path: Path) -> None:
    """A rerun of the README's evaluation reuses these games only if it draws the same openings."""
    header, *games = (json.loads(line) for line in path.read_text().splitlines())
    config = MatchConfig(len(games), header["opening_plies"], header["seed"])
    uttt = make("uttt")
    for record in games:
        assert match_opening(uttt, config, record["index"]) == record["opening"], record["index"]


def test_games_are_reproducible_and_independent_of_workers(ttt: Game) -> None:
    one = match(ttt, "random", "lookahead", num_games=6, workers=1)
    two = match(ttt, "random", "lookahead", num_games=6, workers=2)
    assert [r.moves for r in one.records] == [r.moves for r in two.records]
    other_seed = match(ttt, "random", "lookahead", num_games=6, seed=4)
    assert [r.moves for r in one.records] != [r.moves for r in other_seed.records]


def test_resume_keeps_played_games_and_plays_only_the_missing_ones(
    ttt: Game, tmp_path: Path
) -> None:
    path = tmp_path / "match.jsonl"
    match(ttt, "random", "lookahead", path, num_games=6)
    lines = path.read_text().splitlines()
    assert len(lines) == 7  # header + 6 games
    # Simulate a kill: three games kept, the fourth cut mid-line.
    path.write_text("\n".join(lines[:4]) + "\n" + lines[4][:25])
    BUILT.clear()
    resumed = match(ttt, "random", "lookahead", path, num_games=6)
    assert len(BUILT) == 2 + 2 * 3  # the up-front check, then two agents per missing game
    assert [r.index for r in resumed.records] == list(range(6))
    new_lines = path.read_text().splitlines()
    assert new_lines[:4] == lines[:4]  # kept byte for byte, move times included
    assert sorted(json.loads(x)["index"] for x in new_lines[1:]) == list(range(6))
    BUILT.clear()
    again = match(ttt, "random", "lookahead", path, num_games=6)
    assert len(BUILT) == 2 and again.num_games == 6  # nothing left to play
    more = match(ttt, "random", "lookahead", path, num_games=8)  # a longer match continues
    assert more.num_games == 8


def test_a_record_file_of_another_match_is_refused(ttt: Game, tmp_path: Path) -> None:
    path = tmp_path / "match.jsonl"
    match(ttt, "random", "first", path, num_games=2)
    with pytest.raises(EvaluationError, match="another match"):
        match(ttt, "random", "first", path, num_games=2, seed=99)


def test_games_of_a_network_file_replaced_since_are_not_reused(ttt: Game, tmp_path: Path) -> None:
    weights, path = tmp_path / "agent.urla", tmp_path / "match.jsonl"
    player = f"first:path={weights},label=agent"
    weights.write_bytes(b"the old weights")
    match(ttt, "random", player, path, num_games=2)
    BUILT.clear()
    assert match(ttt, "random", player, path, num_games=2).num_games == 2
    assert len(BUILT) == 2  # the same bytes: both games reused, none played
    weights.write_bytes(b"the new weights")  # e.g. a new agent exported over the shipped one
    with pytest.raises(EvaluationError, match="other weights"):
        match(ttt, "random", player, path, num_games=2)
    lines = path.read_text().splitlines()  # a record from before the digests: matched by path
    header = json.loads(lines[0])
    del header["weights"]
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert match(ttt, "random", player, path, num_games=2).num_games == 2


def test_a_moved_record_keeps_the_games_of_the_same_weights(ttt: Game, tmp_path: Path) -> None:
    """A comparison's runs reused by another, or a worktree's record copied into the main tree:
    the network file's path changed, its bytes did not."""
    old, moved, path = tmp_path / "old.urla", tmp_path / "moved.urla", tmp_path / "match.jsonl"
    old.write_bytes(b"the weights")
    moved.write_bytes(b"the weights")
    match(ttt, "random", f"first:path={old},label=agent", path, num_games=2)
    BUILT.clear()
    assert match(ttt, "random", f"first:path={moved},label=agent", path, num_games=2).num_games == 2
    assert len(BUILT) == 2  # both games reused, none played
    moved.write_bytes(b"other weights")
    with pytest.raises(EvaluationError, match="other weights"):
        match(ttt, "random", f"first:path={moved},label=agent", path, num_games=2)
    with pytest.raises(EvaluationError, match="another match"):  # the player's label differs
        match(ttt, "random", f"first:path={old},label=other", path, num_games=2)
    lines = path.read_text().splitlines()  # a record from before the digests: matched by path
    header = json.loads(lines[0])
    del header["weights"]
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(EvaluationError, match="another match"):
        match(ttt, "random", f"first:path={moved},label=agent", path, num_games=2)


def test_bad_specs_fail_before_any_game(ttt: Game, tmp_path: Path) -> None:
    path = tmp_path / "match.jsonl"
    with pytest.raises(EvaluationError, match="unknown agent 'nope'"):
        match(ttt, "random", "nope", path)
    with pytest.raises(EvaluationError, match="key=value"):
        match(ttt, "random", "uct:num_simulations", path)
    with pytest.raises(EvaluationError, match="no checkpoint"):
        match(ttt, "random", f"network:checkpoint={tmp_path / 'missing.pt'}", path)
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes(b"not a checkpoint")
    with pytest.raises(EvaluationError, match="damaged"):
        match(ttt, "random", f"network:checkpoint={damaged}", path)
    with pytest.raises(EvaluationError, match="needs a 'name'"):
        parse_spec({"num_simulations": 3})
    assert not path.exists()


def test_checkpoint_for_another_game_fails_before_any_game(ttt: Game, tmp_path: Path) -> None:
    from ultimate_rl.nn import ModelConfig, build_model, save_checkpoint

    config = ModelConfig(arch="mlp", mlp_hidden=(8,))
    model = build_model(make("numerical_ttt"), config)
    path = save_checkpoint(
        tmp_path / "n.pt", model=model, model_config=config, game_name="numerical_ttt", step=1
    )
    with pytest.raises(EvaluationError, match="numerical_ttt"):
        match(ttt, "random", f"network:checkpoint={path}", tmp_path / "m.jsonl")
    assert not (tmp_path / "m.jsonl").exists()


def test_an_illegal_move_names_the_agent(ttt: Game) -> None:
    with pytest.raises(EvaluationError, match="'illegal' played -1"):
        match(ttt, "random", "illegal", num_games=2)


def test_specs_parse_from_strings_and_dicts() -> None:
    spec = parse_spec("uct:num_simulations=1000,exploration=1.4,seed=2")
    assert spec == parse_spec(
        {"name": "uct", "num_simulations": 1000, "exploration": 1.4, "seed": 2}
    )
    assert spec.kwargs == {"num_simulations": 1000, "exploration": 1.4, "seed": 2}
    assert parse_spec("uct:num_simulations=100").label == "uct-100"
    assert parse_spec("network:checkpoint=runs/a/step_7.pt").label == "network(step_7)"
    assert parse_spec("random:label=baseline").label == "baseline"


def test_sprt_stops_a_lopsided_match_early(ttt: Game) -> None:
    sprt = SPRTConfig(elo0=0.0, elo1=100.0)
    result = match(ttt, "lookahead", "first", num_games=200, sprt=sprt)
    assert result.sprt is not None and result.sprt.decision == "H1"
    assert result.num_games < 200


def test_agent_against_itself_scores_half_within_its_interval(ttt: Game) -> None:
    result = match(ttt, "random", "random", num_games=120, opening_plies=1)
    assert result.agent_b.label == "random (copy)"
    low, high = result.score_interval()
    assert low <= 0.5 <= high
    assert 0.3 < result.first_player_score < 0.9  # reported, and X's edge is visible


def test_ladder_orders_agents_and_reports(ttt: Game, tmp_path: Path) -> None:
    settings = EvaluationSettings(
        opening_plies=1, workers=1, progress=False, anchor="random", solved_positions=30
    )
    evaluation = evaluate_agent(
        ttt,
        "lookahead:label=strong",
        opponents=["first", "random"],
        games_per_opponent=40,
        settings=settings,
        records_dir=tmp_path / "games",
        agent_factory=tiny_factory,
    )
    ratings = evaluation.ratings
    assert ratings["random"].elo == pytest.approx(1000.0)
    assert ratings["strong"].ci_low > ratings["random"].elo
    scalars = evaluation.scalars()
    assert scalars["elo"] == ratings["strong"].elo
    assert set(scalars) >= {"elo_ci_low", "score_vs/first", "score_vs/random", "optimal_move_rate"}
    assert evaluation.solved["strong"].vs_perfect.num_games == settings.perfect_games
    written = write_report(evaluation, tmp_path / "report")
    assert [p.name for p in written] == ["evaluation.json", "evaluation.md", "elo.png"]
    table = (tmp_path / "report" / "evaluation.md").read_text()
    assert "| strong |" in table and "anchored at random = 1000" in table
    data = json.loads((tmp_path / "report" / "evaluation.json").read_text())
    assert {p["name"] for p in data["ratings"]["players"]} == {"strong", "first", "random"}
    strong_times = [t for m in evaluation.matches_of("strong") for t in m.move_times("strong")]
    assert len(strong_times) > 40 * 2  # every move of its 80 games, not the opponents'
    mean, slowest = data["move_seconds"]["strong"].values()
    assert slowest == max(strong_times) and 0 < mean == pytest.approx(np.mean(strong_times))
    assert f"| {slowest:.3f} |" in table.split("| strong |")[1].splitlines()[0]
    assert len(list((tmp_path / "games").glob("*.jsonl"))) == 4  # ladder pair, 2 rungs, perfect


def test_round_robin_with_steps_plots_elo_against_step(ttt: Game, tmp_path: Path) -> None:
    evaluation = evaluate_agents(
        ttt,
        ["random:label=ckpt-a", "lookahead:label=ckpt-b"],
        opponents=["first"],
        settings=EvaluationSettings(games_per_opponent=10, workers=1, progress=False),
        agent_factory=tiny_factory,
        round_robin=True,
        steps={"ckpt-a": 100, "ckpt-b": 200},
    )
    assert evaluation.ratings.anchor is None  # no uct-1000 here: the mean is pinned
    assert len(evaluation.matches) == 3
    assert write_report(evaluation, tmp_path)[-1].stat().st_size > 1000


def test_duplicate_players_are_refused(ttt: Game) -> None:
    with pytest.raises(EvaluationError, match="appear twice"):
        evaluate_agents(ttt, ["random"], ["random", "first"], agent_factory=tiny_factory)
