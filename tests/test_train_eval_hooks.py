"""The evaluator inside training: Elo through the injected hook, and gating, on tiny runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers import tiny_run_overrides
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from ultimate_rl.evaluate.training import rating_hook
from ultimate_rl.games import make
from ultimate_rl.nn import build_model, load_checkpoint, make_evaluator
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.search import SearchConfig
from ultimate_rl.train import ConfigError, prepare_run, train
from ultimate_rl.train.checkpoints import CHECKPOINT
from ultimate_rl.train.evaluation import gating_match
from ultimate_rl.train.run import compose_train_config

TINY = tiny_run_overrides(
    "model.mlp_hidden=[16]",
    "train.steps_per_iteration=4",
    "train.probe_image_every=0",
    "optim.warmup_steps=2",
    "eval.every=0",
)
GATED = ["eval.gating.enabled=true", "eval.gating.num_games=4"]


def tiny(*extra: str):
    return compose_train_config([*TINY, *extra])


def scalars(run_dir: Path, tag: str) -> list[tuple[int, float]]:
    events = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    if tag not in events.Tags()["scalars"]:
        return []
    return [(e.step, e.value) for e in events.Scalars(tag)]


def selfplay_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_checkpoint(run_dir / CHECKPOINT).extra["selfplay_model"]


def same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_elo_hook_logs_ratings_and_keeps_the_games(tmp_path: Path):
    cfg = tiny(
        "train.iterations=2",
        "eval.elo_every=1",
        "eval.elo_games=2",
        "eval.elo_opponents=[random,'uct:num_simulations=8']",
    )
    games = tmp_path / "evaluations" / "games"
    hook = rating_hook(make("tictactoe"), cfg.eval, games)
    train(cfg, tmp_path, rating_hook=hook)
    elo = scalars(tmp_path, "eval/elo")
    assert [step for step, _ in elo] == [1, 2]
    low, high = scalars(tmp_path, "eval/elo_ci_low"), scalars(tmp_path, "eval/elo_ci_high")
    assert all(lo < value < hi for (_, lo), (_, value), (_, hi) in zip(low, elo, high, strict=True))
    assert [step for step, _ in scalars(tmp_path, "eval/score_vs/uct-8")] == [1, 2]
    report = json.loads((tmp_path / "evaluations" / "iter_00002.json").read_text())
    assert report["elo"] == pytest.approx(elo[-1][1])
    assert {"score_vs/random", "score_vs/uct-8"} <= set(report)
    records = sorted(p.name for p in games.glob("*.jsonl"))
    assert "step-4__vs__random.jsonl" in records and "step-8__vs__uct-8.jsonl" in records
    lines = (games / "step-8__vs__uct-8.jsonl").read_text().splitlines()
    assert sum(json.loads(line)["type"] == "game" for line in lines) == 2


def test_elo_without_a_hook_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="rating hook"):
        train(tiny("train.iterations=1", "eval.elo_every=1"), tmp_path)


def test_gating_config_is_checked():
    with pytest.raises(ConfigError, match=r"eval\.gating\.num_games"):
        train(tiny("eval.gating.num_games=1"), Path("unused"))
    with pytest.raises(ConfigError, match=r"eval\.gating\.typo"):
        train(tiny("+eval.gating.typo=1"), Path("unused"))


def test_gating_that_never_accepts_keeps_the_first_network(tmp_path: Path):
    cfg = tiny("train.iterations=2", *GATED, "eval.gating.threshold=1.01")
    train(cfg, tmp_path)
    assert [accepted for _, accepted in scalars(tmp_path, "gating/accepted")] == [0.0, 0.0]
    first = build_model(make("tictactoe"), ModelConfig.from_dict(dict(cfg.model)), seed=0)
    assert same_weights(selfplay_weights(tmp_path), first.state_dict())
    latest = load_checkpoint(tmp_path / CHECKPOINT).model_state
    assert not same_weights(selfplay_weights(tmp_path), latest)
    report = json.loads((tmp_path / "evaluations" / "iter_00002.json").read_text())
    assert report["gating"]["accepted"] == 0.0 and report["gating"]["selfplay_iteration"] == 0


def test_gating_that_always_accepts_follows_the_latest_network(tmp_path: Path):
    train(tiny("train.iterations=2", *GATED, "eval.gating.threshold=0.0"), tmp_path)
    assert [accepted for _, accepted in scalars(tmp_path, "gating/accepted")] == [1.0, 1.0]
    latest = load_checkpoint(tmp_path / CHECKPOINT).model_state
    assert same_weights(selfplay_weights(tmp_path), latest)


def test_resume_keeps_the_self_play_network(tmp_path: Path):
    train(tiny("train.iterations=1", *GATED, "eval.gating.threshold=0.0"), tmp_path)
    accepted = load_checkpoint(tmp_path / "checkpoints" / "iter_00001.pt").model_state
    overrides = ["train.iterations=2", "eval.gating.threshold=1.01"]
    cfg, run_dir = prepare_run(tiny(f"resume={tmp_path}"), tmp_path / "unused", overrides)
    train(cfg, run_dir)
    assert same_weights(selfplay_weights(tmp_path), accepted)  # not the first, not the latest
    assert scalars(tmp_path, "gating/selfplay_iteration")[-1] == (2, 1.0)


def test_a_network_against_itself_scores_exactly_half():
    """Each opening is played from both sides, so the raw policy's games mirror each other."""
    game = make("tictactoe")
    cfg = tiny("eval.gating.num_games=8", "eval.num_simulations=0").eval
    model = build_model(game, ModelConfig.from_dict(dict(tiny().model)), seed=0)
    evaluate = make_evaluator(model)
    search = SearchConfig.from_dict({"algorithm": "puct", "num_simulations": 4})
    match = gating_match(game, evaluate, evaluate, search, cfg, seed=3)
    assert match.games == 8 and match.score == 0.5
    assert match.wins == match.losses > 0  # the openings differ, and someone wins


def test_only_the_evaluated_weights_are_called_perfect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A run that trains on after a perfect verdict (``stop_when_perfect=false``) keeps the flag
    on that iteration's checkpoint only: the next iteration's weights were never judged, and an
    agent would play them as judged (``Checkpoint.judged_perfect``: float32)."""
    monkeypatch.setattr("ultimate_rl.train.loop.evaluate_network", lambda *_: {})
    monkeypatch.setattr("ultimate_rl.train.loop.judge_perfect", lambda *_: True)
    summary = train(tiny("train.iterations=3", "eval.every=2"), tmp_path)
    snapshots = tmp_path / "checkpoints"
    verdicts = [load_checkpoint(snapshots / f"iter_0000{i}.pt").judged_perfect for i in (1, 2, 3)]
    assert verdicts == [False, True, False]
    assert summary["perfect"] is False
    evaluated = json.loads((tmp_path / "evaluations" / "iter_00002.json").read_text())
    assert evaluated["perfect"] is True
